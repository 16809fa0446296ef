// Private: the JSON codec's decoder (RFC 8259 text → weft::Document).
//
// Why our own: the profile of `weft serve` answering small calls showed
// nlohmann's SAX lexer (one virtual-ish get() per byte, one push_back per
// string byte, locale lookups per number) as a third of the server's time,
// and its string scanner as most of the time of a 64 KiB echo. This parser
// builds the same nlohmann::json values but scans strings in runs (eight
// bytes at a time while they are plain ASCII), reads integers without strtoull,
// and keeps the rules codec.h promises:
//  * -32700 for anything that is not one JSON text (RFC 8259 §2: ws value ws),
//    with "invalid JSON at byte N: <what>", N the offset of the offending byte;
//  * strings must be well-formed UTF-8 (RFC 8259 §8.1, RFC 3629: no overlongs,
//    no surrogates, nothing above U+10FFFF) and escapes must pair surrogates;
//  * a number that overflows a double is -32700 (RFC 8259 §6 allows the limit);
//  * nesting past `max_depth` (top level = 1) is -32600 and stops the parse;
//  * non-negative integers that fit 64 bits are number_unsigned, negative ones
//    number_integer, everything else number_float (as nlohmann parses them);
//  * a repeated object member replaces the earlier one (last wins);
//  * the lexeme of every top-level "id" that is a number but not a 64-bit
//    integer goes to Document::id_lexemes (message.h);
//  * a leading UTF-8 byte order mark is skipped (RFC 8259 §8.1 "MAY ignore").
// Nothing throws; the parse is iterative, so depth costs heap, not stack.
#pragma once

#include <cstddef>
#include <string_view>

#include "weft/error.h"
#include "weft/message.h"

namespace weft::detail {

Result<Document> parse_json(std::string_view text, std::size_t max_depth);

}  // namespace weft::detail
