// What a run ran on: versions, compiler, CPU, threads (env.json, report).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ember::train {

using Environment = std::vector<std::pair<std::string, std::string>>;
Environment environment_info(int64_t seed);
std::string environment_json(const Environment& env);

}  // namespace ember::train
