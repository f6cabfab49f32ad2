#include "replay/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace anchorage::bench {

namespace {

// Names are the benchmark's own (scenarios, configurations), but escape them anyway.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

}  // namespace

bool write_svg_plot(const std::string& path, const std::string& title,
                    const std::vector<PlotPanel>& panels) {
  constexpr double kW = 760, kPanelH = 260, kLeft = 70, kRight = 150, kTop = 40, kBottom = 40;
  const double height = 30 + double(panels.size()) * (kPanelH + kTop + kBottom);
  std::string svg;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"10\" y=\"20\" font-size=\"15\">%s</text>\n",
                kW, height, escape(title).c_str());
  svg += buf;
  for (size_t p = 0; p < panels.size(); ++p) {
    const PlotPanel& panel = panels[p];
    const double y0 = 30 + double(p) * (kPanelH + kTop + kBottom) + kTop;  // the plot area's top
    const double pw = kW - kLeft - kRight;
    size_t n = 1;
    double lo = 1e300, hi = 0;
    for (const PlotSeries& s : panel.series) {
      n = std::max(n, s.y.size());
      for (double v : s.y) {
        lo = std::min(lo, std::max(v, 0.1));
        hi = std::max(hi, std::max(v, 0.1));
      }
    }
    if (hi <= 0) lo = 1, hi = 10;
    // Decades that hold every point.
    const double dlo = std::floor(std::log10(lo)),
                 dhi = std::max(dlo + 1, std::ceil(std::log10(hi)));
    auto X = [&](size_t i) { return kLeft + (n > 1 ? pw * double(i) / double(n - 1) : pw / 2); };
    auto Y = [&](double v) {
      const double l = std::log10(std::max(v, 0.1));
      return y0 + kPanelH * (1 - (l - dlo) / (dhi - dlo));
    };
    std::snprintf(buf, sizeof(buf),
                  "<text x=\"%.0f\" y=\"%.0f\" font-size=\"14\">%s</text>\n"
                  "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                  "stroke=\"#888\"/>\n",
                  kLeft, y0 - 10, escape(panel.title).c_str(), kLeft, y0, pw, kPanelH);
    svg += buf;
    for (double d = dlo; d <= dhi; d += 1) {
      std::snprintf(buf, sizeof(buf),
                    "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                    "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g ms</text>\n",
                    kLeft, kLeft + pw, Y(std::pow(10, d)), Y(std::pow(10, d)), kLeft - 4,
                    Y(std::pow(10, d)) + 4, std::pow(10, d));
      svg += buf;
    }
    const size_t step = std::max<size_t>(1, n / 10);
    for (size_t i = 0; i < n; i += step) {
      std::snprintf(buf, sizeof(buf),
                    "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%zu</text>\n", X(i),
                    y0 + kPanelH + 16, i);
      svg += buf;
    }
    std::snprintf(buf, sizeof(buf),
                  "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">request</text>\n",
                  kLeft + pw / 2, y0 + kPanelH + 32);
    svg += buf;
    for (size_t s = 0; s < panel.series.size(); ++s) {
      const PlotSeries& series = panel.series[s];
      const char* color = kColors[s % std::size(kColors)];
      std::string points;
      for (size_t i = 0; i < series.y.size(); ++i) {
        std::snprintf(buf, sizeof(buf), "%.1f,%.1f ", X(i), Y(series.y[i]));
        points += buf;
      }
      svg += "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" + std::string(color) +
             "\" points=\"" + points + "\"/>\n";
      std::snprintf(buf, sizeof(buf),
                    "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                    "stroke-width=\"3\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                    kLeft + pw + 10, kLeft + pw + 30, y0 + 12 + 18 * double(s),
                    y0 + 12 + 18 * double(s), color, kLeft + pw + 36, y0 + 16 + 18 * double(s),
                    escape(series.name).c_str());
      svg += buf;
    }
  }
  svg += "</svg>\n";
  std::ofstream f(path, std::ios::trunc);
  f << svg;
  return bool(f);
}

}  // namespace anchorage::bench
