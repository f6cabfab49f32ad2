#include "cli/flags.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace anchorage::cli {

bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_uint(std::string_view s, uint64_t* out) {
  if (s.empty() || s[0] == '-') return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double* out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(*out);
}

bool parse_bool(std::string_view s, bool* out) {
  for (std::string_view w : {"on", "true", "yes", "1"})
    if (s == w) return *out = true, true;
  for (std::string_view w : {"off", "false", "no", "0"})
    if (s == w) return *out = false, true;
  return false;
}

bool parse_int_list(std::string_view s, std::vector<int32_t>* out) {
  out->clear();
  if (s.empty()) return false;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    std::string_view item =
        s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    int64_t v = 0;
    if (!parse_int(item, &v) || v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return false;
    out->push_back(int32_t(v));
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

namespace {

std::string format_double(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

}  // namespace

void FlagSet::add_int(std::string name, int64_t* dst, std::string help) {
  flags_.push_back({std::move(name),
                    std::to_string(*dst),
                    std::move(help),
                    false,
                    [dst](std::string_view s) { return parse_int(s, dst); },
                    {}});
}

void FlagSet::add_uint(std::string name, uint64_t* dst, std::string help) {
  flags_.push_back({std::move(name),
                    std::to_string(*dst),
                    std::move(help),
                    false,
                    [dst](std::string_view s) { return parse_uint(s, dst); },
                    {}});
}

void FlagSet::add_double(std::string name, double* dst, std::string help) {
  flags_.push_back({std::move(name),
                    format_double(*dst),
                    std::move(help),
                    false,
                    [dst](std::string_view s) { return parse_double(s, dst); },
                    {}});
}

void FlagSet::add_string(std::string name, std::string* dst, std::string help) {
  std::string def = dst->empty() ? "(none)" : *dst;
  flags_.push_back({std::move(name),
                    std::move(def),
                    std::move(help),
                    false,
                    [dst](std::string_view s) {
                      *dst = std::string(s);
                      return true;
                    },
                    {}});
}

void FlagSet::add_string_list(std::string name, std::vector<std::string>* dst, std::string help) {
  flags_.push_back({std::move(name),
                    "(none)",
                    std::move(help),
                    false,
                    [dst](std::string_view s) {
                      dst->emplace_back(s);
                      return true;
                    },
                    {}});
}

void FlagSet::add_bool(std::string name, bool* dst, std::string help) {
  flags_.push_back({std::move(name),
                    *dst ? "on" : "off",
                    std::move(help),
                    true,
                    [dst](std::string_view s) {
                      *dst = s == "1";
                      return true;
                    },
                    {}});
}

void FlagSet::add_alias(std::string_view name, std::string alias) {
  for (auto& f : flags_) {
    if (f.name == name) {
      f.aliases.push_back(std::move(alias));
      return;
    }
  }
  std::fprintf(stderr, "FlagSet: alias %s of unknown flag --%.*s\n", alias.c_str(),
               int(name.size()), name.data());
  std::abort();  // a programming error, found by any run of the command
}

const FlagSet::Flag* FlagSet::find(std::string_view arg) const {
  for (const auto& f : flags_) {
    if (arg.size() == f.name.size() + 2 && arg.substr(0, 2) == "--" && arg.substr(2) == f.name)
      return &f;
    for (const std::string& a : f.aliases)
      if (arg == a) return &f;
  }
  return nullptr;
}

core::Status FlagSet::parse(const std::vector<std::string_view>& args, bool* help_asked) const {
  *help_asked = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--help" || a == "-h") {
      *help_asked = true;
      return core::Status::ok();
    }
    if (a.size() < 2 || a[0] != '-')
      return core::Status::invalid_argument("unexpected argument '" + std::string(a) + "'");
    std::string_view value;
    bool has_value = false;
    if (size_t eq = a.find('='); eq != std::string_view::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    const Flag* f = find(a);
    if (!f) return core::Status::invalid_argument("unknown flag " + std::string(a));
    if (f->is_switch) {
      // `--x`, `--x=off` (the environment's form) or `--x off`: a following argument is
      // taken only when it is a boolean word, so `--x --y` still reads as two switches.
      bool on = true;
      if (!has_value && i + 1 < args.size() && parse_bool(args[i + 1], &on)) {
        ++i;
      } else if (has_value && !parse_bool(value, &on)) {
        return core::Status::invalid_argument("bad value '" + std::string(value) + "' for --" +
                                              f->name + " (on|off)");
      }
      f->set(on ? "1" : "0");
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size())
        return core::Status::invalid_argument("--" + f->name + " needs a value");
      value = args[++i];
    }
    if (!f->set(value))
      return core::Status::invalid_argument("bad value '" + std::string(value) + "' for --" +
                                            f->name);
  }
  return core::Status::ok();
}

std::vector<std::string> FlagSet::names() const {
  std::vector<std::string> out;
  for (const auto& f : flags_) out.push_back(f.name);
  return out;
}

void FlagSet::print_help(std::FILE* out) const {
  for (const auto& f : flags_) {
    std::string left = "  ";
    for (const std::string& a : f.aliases) left += a + ", ";
    left += "--" + f.name + (f.is_switch ? "" : " <v>");
    std::fprintf(out, "%-26s %s (default: %s)\n", left.c_str(), f.help.c_str(),
                 f.default_text.c_str());
  }
}

}  // namespace anchorage::cli
