// Command-line options of one llmwb subcommand: "--name value", "--name=value" and flags.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/util/result.h"

namespace llmwb::cli {

class CliArgs {
  public:
    // flags: options that take no value. Everything else takes exactly one value.
    static Result<CliArgs> parse(const std::vector<std::string>& args,
                                 const std::set<std::string>& value_options,
                                 const std::set<std::string>& flags);

    bool has(const std::string& name) const;
    std::optional<std::string> get(const std::string& name) const;
    std::string get_or(const std::string& name, const std::string& fallback) const;
    // Every value of an option given more than once (get() returns the last).
    std::vector<std::string> get_all(const std::string& name) const;

    // Typed accessors: an Error names the option and the bad value.
    Result<std::optional<int64_t>> get_int(const std::string& name, int64_t min, int64_t max) const;
    Result<std::optional<double>> get_double(const std::string& name, double min, double max) const;
    Result<std::optional<bool>> get_bool(const std::string& name) const;
    Result<std::vector<int32_t>> get_ids(const std::string& name) const; // "1,2,3"

  private:
    std::map<std::string, std::vector<std::string>> values_;
    std::set<std::string> flags_;
};

// Reads a whole file; an Error names the file.
Result<std::string> read_text_file(const std::string& path);

} // namespace llmwb::cli
