// Messages written out: as JSON text (write_json, to_json_text) and as a json
// value (to_json_value).
#include "weft/message.h"

#include <string>
#include <string_view>
#include <variant>

#include "json/write.h"

namespace weft {

// The envelope's fixed text as string_view literals: appended without a strlen each.
using namespace std::string_view_literals;

void write_json(const Message& m, std::string& out) {
  // Each message's fixed opening as one literal: an append each costs more
  // than its bytes (the answer to a small call is ~40 bytes in six appends).
  const std::size_t start = out.size();
  if (auto* r = std::get_if<Request>(&m)) {
    out += R"({"jsonrpc":"2.0","method":)"sv;
    detail::write_json_string(r->method, out);
    if (r->params) {
      out += R"(,"params":)"sv;
      detail::write_json_value(*r->params, out);
    }
    out += R"(,"id":)"sv;
    r->id.write_json(out);
  } else if (auto* n = std::get_if<Notification>(&m)) {
    out += R"({"jsonrpc":"2.0","method":)"sv;
    detail::write_json_string(n->method, out);
    if (n->params) {
      out += R"(,"params":)"sv;
      detail::write_json_value(*n->params, out);
    }
  } else {
    const auto& resp = std::get<Response>(m);
    if (resp.is_error()) {
      const Error& e = std::get<Error>(resp.outcome);
      out += R"({"jsonrpc":"2.0","error":{"code":)"sv;
      out += std::to_string(e.code);
      out += R"(,"message":)"sv;
      detail::write_json_string(e.message, out);
      if (e.data) {
        out += R"(,"data":)"sv;
        detail::write_json_value(*e.data, out);
      }
      out += R"(},"id":)"sv;
    } else {
      out += R"({"jsonrpc":"2.0","result":)"sv;
      detail::write_json_value(std::get<json>(resp.outcome), out);
      out += R"(,"id":)"sv;
    }
    resp.id.write_json(out);
    if (resp.metrics) {
      // response_size: this response's bytes without the metrics member,
      // i.e. up to here plus the closing brace (ResponseMetrics).
      const std::size_t size = out.size() - start + 1;
      out += R"(,"metrics":{"processing_time_us":)";
      out += std::to_string(resp.metrics->processing_time_us);
      out += R"(,"response_size":)";
      out += std::to_string(size);
      out += '}';
    }
  }
  out += '}';
}

void write_json(const Outgoing& o, std::string& out) {
  if (!o.batch) {
    for (const auto& m : o.messages) write_json(m, out);
    return;
  }
  out += '[';
  for (std::size_t i = 0; i < o.messages.size(); ++i) {
    if (i) out += ',';
    write_json(o.messages[i], out);
  }
  out += ']';
}

std::string to_json_text(const Message& m) {
  std::string s;
  write_json(m, s);
  return s;
}

json to_json_value(const Message& m) {
  json j = json::object();
  j["jsonrpc"] = "2.0";
  if (auto* r = std::get_if<Request>(&m)) {
    j["method"] = r->method;
    if (r->params) j["params"] = *r->params;
    j["id"] = r->id.to_json();
  } else if (auto* n = std::get_if<Notification>(&m)) {
    j["method"] = n->method;
    if (n->params) j["params"] = *n->params;
  } else {
    const auto& resp = std::get<Response>(m);
    if (resp.is_error()) j["error"] = std::get<Error>(resp.outcome).to_json();
    else j["result"] = std::get<json>(resp.outcome);
    j["id"] = resp.id.to_json();
    if (resp.metrics)  // response_size as given: this is no encoding
      j["metrics"] = json{{"processing_time_us", resp.metrics->processing_time_us},
                          {"response_size", resp.metrics->response_size}};
  }
  return j;
}

}  // namespace weft
