// Writes the files of a three-run sweep report (the test fixture, with longer runs) into a
// folder: scripts/report-screenshot.sh renders its report.html in a browser.
#include <cstdio>
#include <fstream>

#include "app/report/report_files.h"
#include "report/report_fixture.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    llmwb::BenchReport rep;
    rep = llmwb::report_test::make_report();
    rep.runs.clear();
    rep.runs.push_back(llmwb::report_test::make_run(0, "max_num_seqs=4", 60, 1500));
    rep.runs.push_back(llmwb::report_test::make_run(1, "max_num_seqs=8 (ngram k=3)", 60, 1200));
    rep.runs.push_back(llmwb::report_test::make_run(2, "max_num_seqs=12, cancelled", 45, 900));
    for (const auto& [name, bytes] : llmwb::report_files(rep)) {
        std::ofstream f(std::string(argv[1]) + "/" + name, std::ios::binary);
        f << bytes;
        if (!f) {
            std::fprintf(stderr, "cannot write %s/%s\n", argv[1], name.c_str());
            return 1;
        }
    }
    return 0;
}
