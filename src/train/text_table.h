// Plain-text tables with aligned columns, for the terminal (multirun, `ember runs`).
#pragma once

#include <string>
#include <vector>

namespace ember::train {

// Columns separated by two spaces, each as wide as its widest cell; the
// columns flagged in `right` (numbers) are right-aligned. No trailing spaces.
std::string text_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right = {});

}  // namespace ember::train
