// ValueBuilder, the parser's DOM mode (the whole document as one json value),
// and parse_json without a sink.
#include "json/parse.h"

#include <string>
#include <utility>

namespace weft::detail {

void ValueBuilder::begin_array() {
  root_ = json::array();
  array_ = root_.get_ptr<json::array_t*>();
}

void ValueBuilder::begin_object() {
  json* o = &root_;
  if (array_) o = &array_->emplace_back();
  *o = json::object();
  object_ = o->get_ptr<json::object_t*>();
}

void ValueBuilder::member(std::string_view name, json&& value, std::string_view) {
  // A repeated name replaces the earlier value: last wins.
  (*object_)[std::string(name)] = std::move(value);
}

void ValueBuilder::member_text(std::string_view name, std::string_view text) {
  member(name, json(std::string(text)), {});
}

void ValueBuilder::value(json&& v) {
  if (array_) array_->push_back(std::move(v));
  else root_ = std::move(v);
}

Result<json> parse_json(std::string_view text, std::size_t max_depth) {
  ValueBuilder b;
  if (Result<void> r = parse_json(text, max_depth, b); !r) return r.error();
  return b.take();
}

}  // namespace weft::detail
