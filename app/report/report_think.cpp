#include "app/report/report_think.h"

#include <algorithm>
#include <cstdio>

#include "app/report/report_text.h"
#include "app/report/svg_chart.h"

namespace llmwb {

namespace {

using tj = nlohmann::ordered_json;

std::string think_text_of(const tj& j, const char* key) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end())
        return {};
    if (it->is_string())
        return it->get<std::string>();
    if (it->is_number_integer())
        return std::to_string(it->get<int64_t>());
    if (it->is_number())
        return report_detail::format_double(it->get<double>());
    return {};
}

double think_number_of(const tj& j, const char* key) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string think_csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

const tj& think_rungs_of(const tj& run) {
    static const tj none = tj::array();
    const auto it = run.is_object() ? run.find("rungs") : run.end();
    return it != run.end() && it->is_array() ? *it : none;
}

} // namespace

std::string think_csv(const tj& runs) {
    std::string s = "run,name,model,task_set,rung,kind,value,tasks,correct,accuracy,tokens,"
                    "tokens_per_task,wall_ms,ms_per_task,ties,no_answer\n";
    if (!runs.is_array())
        return s;
    for (size_t k = 0; k < runs.size(); ++k) {
        const tj& run = runs[k];
        for (const tj& r : think_rungs_of(run)) {
            s += std::to_string(k);
            for (const char* key : {"name", "model", "task_set"})
                s += "," + think_csv_cell(think_text_of(run, key));
            for (const char* key :
                 {"rung", "kind", "value", "tasks", "correct", "accuracy", "tokens",
                  "tokens_per_task", "wall_ms", "ms_per_task", "ties", "no_answer"})
                s += "," + think_csv_cell(think_text_of(r, key));
            s += "\n";
        }
    }
    return s;
}

std::string think_html_section(const tj& runs) {
    if (!runs.is_array() || runs.empty())
        return {};
    using report_detail::html_escape;
    std::string s = "<h2>Think harder</h2>\n";
    LineChart chart;
    chart.title = "Accuracy against tokens spent per question";
    chart.x_label = "tokens per question";
    chart.y_label = "accuracy (%)";
    for (size_t k = 0; k < runs.size(); ++k) {
        ChartSeries series;
        series.name = std::to_string(k) + ": " + think_text_of(runs[k], "name") + " · " +
                      think_text_of(runs[k], "model");
        series.markers = true;
        for (const tj& r : think_rungs_of(runs[k]))
            series.points.emplace_back(think_number_of(r, "tokens_per_task"),
                                       100.0 * think_number_of(r, "accuracy"));
        std::sort(series.points.begin(), series.points.end());
        chart.series.push_back(std::move(series));
    }
    s += svg_line_chart(chart);
    s += "<table>\n<tr><th>run</th><th>task set</th><th>rung</th><th>accuracy</th>"
         "<th>correct / tasks</th><th>tokens per task</th><th>ms per task</th><th>ties</th>"
         "<th>no answer</th></tr>\n";
    for (size_t k = 0; k < runs.size(); ++k)
        for (const tj& r : think_rungs_of(runs[k])) {
            char acc[32], tok[32], ms[32];
            std::snprintf(acc, sizeof acc, "%.1f%%", 100.0 * think_number_of(r, "accuracy"));
            std::snprintf(tok, sizeof tok, "%.1f", think_number_of(r, "tokens_per_task"));
            std::snprintf(ms, sizeof ms, "%.1f", think_number_of(r, "ms_per_task"));
            s += "<tr><td>" +
                 html_escape(std::to_string(k) + ": " + think_text_of(runs[k], "name")) +
                 "</td><td>" + html_escape(think_text_of(runs[k], "task_set")) + "</td><td>" +
                 html_escape(think_text_of(r, "rung")) + "</td><td>" + acc + "</td><td>" +
                 html_escape(think_text_of(r, "correct") + " / " + think_text_of(r, "tasks")) +
                 "</td><td>" + tok + "</td><td>" + ms + "</td><td>" +
                 html_escape(think_text_of(r, "ties")) + "</td><td>" +
                 html_escape(think_text_of(r, "no_answer")) + "</td></tr>\n";
        }
    s += "</table>\n";
    return s;
}

} // namespace llmwb
