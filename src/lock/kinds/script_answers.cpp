// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/script_answers.hpp"

#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

#include <algorithm>

namespace redlock::detail {

bool is_integer_array(const resp::value& v, std::size_t size) {
    return v.kind == resp::type::array && v.elements.size() == size &&
           std::all_of(v.elements.begin(), v.elements.end(),
                       [](const resp::value& e) { return e.kind == resp::type::integer; });
}

const resp::value& script_reply(std::span<const resp::value> replies) {
    static const resp::value none;
    return replies.empty() ? none : replies.front();
}

acquire_answer script_failed(boost::system::error_code ec, const resp::value& v) {
    acquire_answer a;
    a.verdict = vote::failed;
    a.ec = ec;
    if (v.is_error()) a.detail = v.str;
    return a;
}

acquire_answer malformed(const resp::value& v) {
    acquire_answer a;
    a.verdict = vote::failed;
    a.ec = error::unexpected_reply;
    a.detail = resp::to_string(v);
    a.node_fault = true;
    return a;
}

acquire_answer granted_answer() {
    acquire_answer a;
    a.verdict = vote::granted;
    return a;
}

acquire_answer denied_answer() {
    acquire_answer a;
    a.verdict = vote::denied;
    return a;
}

void release_call(const resource_keys& keys, std::string_view owner, std::string_view token, bool announce,
                  node_call& out) {
    out.script = owner.empty() ? &scripts::release : &scripts::release_reentrant;
    out.key(keys.lock);
    out.key(keys.released);
    if (!owner.empty()) out.arg(owner);
    out.arg(token);
    if (!announce) out.arg("quiet");
}

}  // namespace redlock::detail
