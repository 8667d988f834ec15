#include "app/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/report/report_text.h"

namespace llmwb {

namespace {

using report_detail::html_escape;

constexpr double kW = 560, kH = 330;
constexpr double kLeft = 66, kRight = 18, kTop = 56, kBottom = 50;
const char* const kColors[] = {"#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2"};

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// A tick label: compact, without trailing zeros.
std::string tick_label(double v, double step) {
    char buf[32];
    const double a = std::fabs(v);
    if (a != 0 && (a >= 1e6 || a < 1e-3))
        std::snprintf(buf, sizeof buf, "%.2g", v);
    else if (step >= 1)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else {
        const int decimals = std::min(6, static_cast<int>(std::ceil(-std::log10(step))));
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    }
    std::string s = buf;
    return s == "-0" ? "0" : s;
}

struct Axis {
    double lo = 0, hi = 1, step = 0.2;
};

// "Nice" bounds and a step of 1, 2 or 5 x 10^k giving about `target` ticks.
Axis nice_axis(double lo, double hi, int target) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi <= lo)
        hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
    const double raw = (hi - lo) / target;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) {
            step = m * mag;
            break;
        }
    Axis a;
    a.step = step;
    a.lo = std::floor(lo / step) * step;
    a.hi = std::ceil(hi / step) * step;
    if (a.hi <= a.lo)
        a.hi = a.lo + step;
    return a;
}

struct Frame {
    Axis x, y;
    double px(double v) const { return kLeft + (v - x.lo) / (x.hi - x.lo) * (kW - kLeft - kRight); }
    double py(double v) const {
        return kH - kBottom - (v - y.lo) / (y.hi - y.lo) * (kH - kTop - kBottom);
    }
};

std::string open_svg(const std::string& title) {
    return "<svg class=\"chart\" viewBox=\"0 0 " + num(kW) + " " + num(kH) +
           "\" role=\"img\" aria-label=\"" + html_escape(title) + "\">\n<title>" +
           html_escape(title) + "</title>\n<text x=\"" + num(kLeft) + "\" y=\"20\" class=\"ct\">" +
           html_escape(title) + "</text>\n";
}

std::string axes(const Frame& f, const std::string& x_label, const std::string& y_label) {
    std::string s;
    const double x0 = kLeft, x1 = kW - kRight, y0 = kH - kBottom, y1 = kTop;
    for (double v = f.y.lo; v <= f.y.hi + f.y.step * 1e-9; v += f.y.step) {
        const double y = f.py(v);
        s += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x1) + "\" y2=\"" +
             num(y) + "\" class=\"grid\"/>\n";
        s += "<text x=\"" + num(x0 - 6) + "\" y=\"" + num(y + 4.5) + "\" class=\"yt\">" +
             html_escape(tick_label(v, f.y.step)) + "</text>\n";
    }
    for (double v = f.x.lo; v <= f.x.hi + f.x.step * 1e-9; v += f.x.step) {
        const double x = f.px(v);
        s += "<line x1=\"" + num(x) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x) + "\" y2=\"" +
             num(y0 + 5) + "\" class=\"axis\"/>\n";
        s += "<text x=\"" + num(x) + "\" y=\"" + num(y0 + 19) + "\" class=\"xt\">" +
             html_escape(tick_label(v, f.x.step)) + "</text>\n";
    }
    s += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x1) + "\" y2=\"" +
         num(y0) + "\" class=\"axis\"/>\n";
    s += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x0) + "\" y2=\"" +
         num(y1) + "\" class=\"axis\"/>\n";
    s += "<text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(kH - 8) + "\" class=\"xl\">" +
         html_escape(x_label) + "</text>\n";
    s += "<text x=\"16\" y=\"" + num((y0 + y1) / 2) + "\" class=\"yl\" transform=\"rotate(-90 16 " +
         num((y0 + y1) / 2) + ")\">" + html_escape(y_label) + "</text>\n";
    return s;
}

std::string legend(const std::vector<std::string>& names) {
    std::string s;
    double x = kLeft;
    for (size_t i = 0; i < names.size(); ++i) {
        const char* c = kColors[i % std::size(kColors)];
        s += "<rect x=\"" + num(x) + "\" y=\"33\" width=\"14\" height=\"5\" fill=\"" + c +
             "\"/>\n<text x=\"" + num(x + 18) + "\" y=\"40\" class=\"lg\">" +
             html_escape(names[i]) + "</text>\n";
        // About 7.5 units per character at the legend's size; names are short.
        x += 34 + 7.5 * static_cast<double>(std::min<size_t>(names[i].size(), 40));
    }
    return s;
}

} // namespace

std::vector<std::pair<double, double>>
downsample_min_max(const std::vector<std::pair<double, double>>& points, size_t max_points) {
    if (points.size() <= max_points || max_points < 2)
        return points;
    const size_t buckets = max_points / 2;
    std::vector<std::pair<double, double>> out;
    out.reserve(buckets * 2);
    for (size_t b = 0; b < buckets; ++b) {
        const size_t lo = b * points.size() / buckets;
        const size_t hi = (b + 1) * points.size() / buckets;
        if (lo >= hi)
            continue;
        size_t mn = lo, mx = lo;
        for (size_t i = lo; i < hi; ++i) {
            if (points[i].second < points[mn].second)
                mn = i;
            if (points[i].second > points[mx].second)
                mx = i;
        }
        out.push_back(points[std::min(mn, mx)]);
        if (mn != mx)
            out.push_back(points[std::max(mn, mx)]);
    }
    return out;
}

std::string svg_line_chart(const LineChart& chart) {
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0, ymin = 0;
    std::vector<std::vector<std::pair<double, double>>> drawn;
    std::vector<std::string> names;
    for (const ChartSeries& s : chart.series) {
        std::vector<std::pair<double, double>> pts;
        for (const auto& p : s.points)
            if (std::isfinite(p.first) && std::isfinite(p.second))
                pts.push_back(p);
        pts = downsample_min_max(pts, kMaxChartPoints);
        for (const auto& [x, y] : pts) {
            xmin = std::min(xmin, x);
            xmax = std::max(xmax, x);
            ymax = std::max(ymax, y);
            ymin = std::min(ymin, y);
        }
        drawn.push_back(std::move(pts));
        names.push_back(s.name);
    }
    Frame f;
    f.x = nice_axis(std::isfinite(xmin) ? xmin : 0, std::isfinite(xmax) ? xmax : 1, 6);
    f.y = nice_axis(ymin, ymax, 5);
    std::string s = open_svg(chart.title);
    s += axes(f, chart.x_label, chart.y_label);
    for (size_t i = 0; i < drawn.size(); ++i) {
        const char* c = kColors[i % std::size(kColors)];
        if (drawn[i].empty())
            continue;
        std::string pts;
        for (const auto& [x, y] : drawn[i])
            pts += num(f.px(x)) + "," + num(f.py(y)) + " ";
        s += "<polyline fill=\"none\" stroke=\"" + std::string(c) +
             "\" stroke-width=\"1.6\" points=\"" + pts + "\"/>\n";
        if (chart.series[i].markers)
            for (const auto& [x, y] : drawn[i])
                s += "<circle cx=\"" + num(f.px(x)) + "\" cy=\"" + num(f.py(y)) +
                     "\" r=\"3.5\" fill=\"" + c + "\"/>\n";
    }
    s += legend(names);
    s += "</svg>\n";
    return s;
}

std::string svg_histogram(const Histogram& hist) {
    std::vector<double> v;
    for (double x : hist.values)
        if (std::isfinite(x))
            v.push_back(x);
    const int bins = std::clamp(hist.bins, 1, 200);
    double lo = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
    double hi = v.empty() ? 1 : *std::max_element(v.begin(), v.end());
    if (hi <= lo) { // one value (or all equal): a bin around it
        lo -= 0.5;
        hi += 0.5;
    }
    const double width = (hi - lo) / bins;
    std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
    for (double x : v) {
        auto b = static_cast<int64_t>((x - lo) / width);
        b = std::clamp<int64_t>(b, 0, bins - 1);
        ++counts[static_cast<size_t>(b)];
    }
    const int64_t top = counts.empty() ? 1 : *std::max_element(counts.begin(), counts.end());
    Frame f;
    f.x = nice_axis(lo, hi, 6);
    f.y = nice_axis(0, static_cast<double>(std::max<int64_t>(top, 1)), 5);
    if (f.y.step < 1) { // counts: whole ticks
        f.y.step = 1;
        f.y.hi = std::max(1.0, std::ceil(f.y.hi));
    }
    std::string s = open_svg(hist.title);
    s += axes(f, hist.x_label, "requests");
    for (int b = 0; b < bins; ++b) {
        if (counts[static_cast<size_t>(b)] == 0)
            continue;
        const double x0 = f.px(lo + b * width), x1 = f.px(lo + (b + 1) * width);
        const double y = f.py(static_cast<double>(counts[static_cast<size_t>(b)]));
        s += "<rect x=\"" + num(x0 + 0.5) + "\" y=\"" + num(y) + "\" width=\"" +
             num(std::max(0.5, x1 - x0 - 1)) + "\" height=\"" + num(f.py(0) - y) + "\" fill=\"" +
             kColors[0] + "\"/>\n";
    }
    s += legend({std::to_string(v.size()) + " requests, " + std::to_string(bins) + " bins"});
    s += "</svg>\n";
    return s;
}

} // namespace llmwb
