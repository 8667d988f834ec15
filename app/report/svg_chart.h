// Inline SVG charts for report.html: line charts and histograms with axes, ticks, labels and a
// legend, sized by viewBox so that they scale with the page. No scripts, no external resources;
// every text is escaped. Long series are downsampled (min and max per bucket) to at most
// kMaxChartPoints points.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace llmwb {

inline constexpr size_t kMaxChartPoints = 2000;

struct ChartSeries {
    std::string name;
    std::vector<std::pair<double, double>> points; // (x, y), x ascending
    bool markers = false;                          // a dot at every point (sweeps)
};

struct LineChart {
    std::string title, x_label, y_label;
    std::vector<ChartSeries> series;
};

struct Histogram {
    std::string title, x_label; // y: the number of values in each bin
    std::vector<double> values;
    int bins = 20;
};

std::string svg_line_chart(const LineChart& chart);
std::string svg_histogram(const Histogram& hist);

// At most max_points points: the min and the max of each bucket of consecutive points, in order.
std::vector<std::pair<double, double>>
downsample_min_max(const std::vector<std::pair<double, double>>& points, size_t max_points);

} // namespace llmwb
