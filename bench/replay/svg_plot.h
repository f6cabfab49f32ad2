// A line plot as a self-contained SVG file: one panel per scenario, one line per configuration
// (x the request's index in the scenario, y its TTFT on a log scale, so the cold requests and
// the resumed ones both show).
#pragma once

#include <string>
#include <vector>

namespace anchorage::bench {

struct PlotSeries {
  std::string name;
  std::vector<double> y;
};

struct PlotPanel {
  std::string title;
  std::vector<PlotSeries> series;
};

// Returns false when the file cannot be written.
bool write_svg_plot(const std::string& path, const std::string& title,
                    const std::vector<PlotPanel>& panels);

}  // namespace anchorage::bench
