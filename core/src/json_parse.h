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
//  * nesting past `max_depth` (top level = 1) is -32600 (nesting_too_deep)
//    and stops the parse;
//  * non-negative integers that fit 64 bits are number_unsigned, negative ones
//    number_integer, everything else number_float (as nlohmann parses them);
//  * a repeated object member replaces the earlier one (last wins);
//  * the lexeme of every top-level "id" that is a number but not a 64-bit
//    integer goes to Document::id_lexemes (message.h);
//  * a leading UTF-8 byte order mark is skipped (RFC 8259 §8.1 "MAY ignore").
// Nothing throws; the parse is iterative, so depth costs heap, not stack.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/error.h"
#include "weft/message.h"

namespace weft::detail {

// The error for input nested deeper than CodecLimits::max_depth, shared by
// both codecs so the wire answer is the same whichever decoded the frame. It
// names the limit and the option, so whoever meets it knows what to raise.
inline Error nesting_too_deep(std::size_t max_depth) {
  return Error(code::kInvalidRequest, "Invalid Request: nesting deeper than " + std::to_string(max_depth) +
                                          " levels (max_depth)");
}

Result<Document> parse_json(std::string_view text, std::size_t max_depth);

// The members of an object in arrival order; a repeated name is listed twice
// and the last one counts, as it would in a json object.
using FlatMembers = std::vector<std::pair<std::string, json>>;

// A document whose top-level object, if it is one, was not built as a json
// object: `flat` is true and its members are in `members` (doc.value stays
// null; doc.id_lexemes is as parse_json gives it). For an array or a scalar
// `flat` is false and `doc` is what parse_json returns.
struct FlatDocument {
  Document doc;
  bool flat = false;
  FlatMembers members;
};

// parse_json for the hot path of a Connection: a JSON-RPC message is almost
// always one object that classify() takes apart at once, so building its
// std::map (a node allocation and string compares per member, then nlohmann's
// destructor) is skipped. Same errors, same rules, same values.
Result<FlatDocument> parse_json_flat(std::string_view text, std::size_t max_depth);

// weft::classify() for a FlatDocument (message.cpp): the same rules, applied
// to the listed members.
Incoming classify(FlatDocument&& d, std::size_t max_batch);

}  // namespace weft::detail
