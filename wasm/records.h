// wasm/records.h — messages across the boundary, as abi.h lays them out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::wasm {

// Outgoing: fills `recs` (abi R_* layout, one record per message) and `text`
// (JSON of values the core made itself). Pointers in the records stay valid
// while `o` and `text` live. A payload marker goes back to its pool as it is
// recorded (the record holds its handle): `o` keeps its ids, methods and
// error messages, not its payloads.
void write_records(Outgoing& o, std::vector<double>& recs, std::string& text);
// The same for one result (PeerOptions::send_result): one record, as
// write_records() writes Response{id, v} without metrics.
void write_result(const Id& id, json& v, std::vector<double>& recs, std::string& text);

// Incoming: the message described by descriptor record `d` (abi D_*
// layout), with its strings in `in`, judged by judge() (message.h) as
// classify() judges an Envelope.
Item read_descriptor(const double* d, const char* in);
// The same, appended to `items` and made in the vector's own slot (an Item
// returned and then pushed would be moved, and the emptied one destroyed,
// per message).
void append_described(std::vector<Item>& items, const double* d, const char* in);

}  // namespace weft::wasm
