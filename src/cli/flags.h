// FlagSet: the command line flags of one subcommand — registration with a default and a help
// line, parsing of `--name value` / `--name=value` (numbers with std::from_chars, whole
// string or nothing), and the help text listing every flag with its default. A flag may have
// aliases (`-m`, `--ctx-size`), so the names a llama.cpp user types work as well.
//
// Threading: single-threaded (start-up only).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace anchorage::cli {

class FlagSet {
 public:
  // Each flag writes into *dst; the value *dst holds at registration is the default shown.
  void add_int(std::string name, int64_t* dst, std::string help);
  void add_uint(std::string name, uint64_t* dst, std::string help);
  void add_double(std::string name, double* dst, std::string help);
  void add_string(std::string name, std::string* dst, std::string help);
  // A repeatable flag: every occurrence appends its value (--api-key A --api-key B).
  void add_string_list(std::string name, std::vector<std::string>* dst, std::string help);
  // A switch: `--name` means on; `--name=off` / `--name off` (on|off|true|false|yes|no|1|0)
  // set it either way, so a switch that defaults on can be turned off.
  void add_bool(std::string name, bool* dst, std::string help);
  // Another spelling of the flag registered as name, written with its dashes ("-m",
  // "--ctx-size"); --help lists it beside the name. The flag must exist.
  void add_alias(std::string_view name, std::string alias);

  // Parses args (without the program and subcommand names). InvalidArgument names the flag
  // and the bad value. `--help` / `-h` sets *help_asked and stops.
  core::Status parse(const std::vector<std::string_view>& args, bool* help_asked) const;
  void print_help(std::FILE* out) const;
  // Every flag's name, in registration order.
  std::vector<std::string> names() const;

 private:
  struct Flag {
    std::string name;
    std::string default_text;
    std::string help;
    bool is_switch = false;
    std::function<bool(std::string_view)> set;  // false: the value does not parse
    std::vector<std::string> aliases;           // with their dashes
  };
  // The flag an argument names, dashes included ("--model", "-m"); nullptr if none.
  const Flag* find(std::string_view arg) const;

  std::vector<Flag> flags_;
};

// Whole-string parsers (no sign for unsigned, no trailing characters).
bool parse_int(std::string_view s, int64_t* out);
bool parse_uint(std::string_view s, uint64_t* out);
bool parse_double(std::string_view s, double* out);
// on|true|yes|1 and off|false|no|0.
bool parse_bool(std::string_view s, bool* out);
// "1,2,3" -> {1, 2, 3}; false on an empty list, an empty item or a non-number.
bool parse_int_list(std::string_view s, std::vector<int32_t>* out);

}  // namespace anchorage::cli
