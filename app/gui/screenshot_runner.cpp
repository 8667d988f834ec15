#include "app/gui/screenshot_runner.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "app/gui/translation_loader.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "ui/batch_timeline_view.h"
#include "ui/benchmark_page.h"
#include "ui/chat_view.h"
#include "ui/engine_panel.h"
#include "ui/main_window.h"
#include "ui/markdown_body.h"
#include "ui/model_panel.h"
#include "ui/theme.h"
#include "ui/tuning_panel.h"

namespace llmwb {

ScreenshotRunner::ScreenshotRunner(MainWindow& window, ChatController& controller,
                                   ThemeController& theme, TranslationLoader& translations,
                                   const QString& outDir, QObject* parent)
    : QObject(parent), window_(window), controller_(controller), theme_(theme),
      translations_(translations), outDir_(outDir) {
    QDir().mkpath(outDir_);
}

void ScreenshotRunner::after(int ms, std::function<void()> fn) {
    QTimer::singleShot(ms, this, std::move(fn));
}

void ScreenshotRunner::save(const QString& name) {
    QApplication::processEvents();
    const QString path = QDir(outDir_).filePath(name + QStringLiteral(".png"));
    const bool ok = window_.grab().save(path);
    std::printf("%s %s\n", ok ? "saved" : "FAILED", qPrintable(path));
    std::fflush(stdout);
}

void ScreenshotRunner::onModelLoadFailed(const QString& message) {
    std::fprintf(stderr, "screenshot: model failed to load: %s\n", qPrintable(message));
    save(QStringLiteral("00-load-failed"));
    QApplication::exit(1);
}

void ScreenshotRunner::onModelLoaded(const ModelMetadata&) {
    if (started_)
        return;
    started_ = true;
    after(300, [this] {
        window_.newConversation();
        after(300, [this] {
            save(QStringLiteral("01-empty-chat"));
            showMarkdownSample();
        });
    });
}

void ScreenshotRunner::showMarkdownSample() {
    // A stored conversation that shows how answers render (written into the screenshot's
    // temporary database, not generated).
    ConversationStore& store = controller_.store();
    auto c = store.createConversation(QStringLiteral("Markdown rendering sample"));
    if (!c) {
        startStreaming();
        return;
    }
    ChatMessage u;
    u.conversationId = c->id;
    u.role = QStringLiteral("user");
    u.content = QStringLiteral("How do I count the blocks a prompt needs?");
    store.addMessage(u);
    ChatMessage a;
    a.conversationId = c->id;
    a.role = QStringLiteral("assistant");
    a.model = QStringLiteral("sample");
    a.content = QStringLiteral(
        "Each block holds **16 tokens**, so a prompt of *n* tokens needs `ceil(n / 16)` "
        "blocks:\n\n```cpp\nint blocks_needed(int n_tokens, int block_size = 16) {\n"
        "    return (n_tokens + block_size - 1) / block_size;\n}\n```\n\n"
        "- 100 tokens → 7 blocks\n- 16 tokens → 1 block\n");
    a.promptTokens = 18;
    a.completionTokens = 64;
    a.ttftMs = 42;
    a.tokensPerSecond = 57.3;
    store.addMessage(a);
    emit controller_.conversationCreated(*c);
    window_.openConversation(c->id);
    after(400, [this] {
        save(QStringLiteral("02-markdown"));
        startStreaming();
    });
}

void ScreenshotRunner::startStreaming() {
    auto c = controller_.newConversation();
    if (!c) {
        QApplication::exit(1);
        return;
    }
    SamplingSettings s = SamplingSettings::fromJson(c->sampling);
    s.maxTokens = 160;
    s.seed = 42;
    c->sampling = s.toJson();
    controller_.updateConversation(*c);
    window_.openConversation(c->id);
    const qint64 id = c->id;
    connect(&controller_, &ChatController::messageTextChanged, this,
            [this, id](qint64 conversationId, qint64, const QString& text) {
                if (conversationId != id || grabbedStreaming_ || text.size() < 120)
                    return;
                grabbedStreaming_ = true;
                // The demo model finishes within a few coalesced renders (~33 ms apart): show
                // the text streamed so far now (render the pending update, lay out), then grab.
                for (MarkdownBody* b : window_.chatView()->findChildren<MarkdownBody*>())
                    b->setMarkdownText(b->markdownText());
                QApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
                save(QStringLiteral("03-streaming"));
            });
    connect(&controller_, &ChatController::generatingChanged, this,
            [this, id](qint64 conversationId, bool generating) {
                if (conversationId == id && !generating)
                    after(300, [this] { finishUp(); });
            });
    window_.chatView()->input()->setPlainText(
        QStringLiteral("Explain paged attention in two sentences."));
    window_.chatView()->send();
}

void ScreenshotRunner::finishUp() {
    save(QStringLiteral("04-finished"));
    loadTest();
}

// Fires the load test and grabs the Engine dock (floated and enlarged so that the block map
// and the timeline are readable) once several requests run and the timeline has filled.
void ScreenshotRunner::loadTest() {
    QDockWidget* dock = window_.dock(QStringLiteral("engineDock"));
    EnginePanel* panel = window_.enginePanel();
    dock->setFloating(true);
    dock->resize(900, 760);
    dock->show();
    dock->raise();
    // A pool of about 300 blocks (set through the Tuning dock, as a user would) so that the
    // map is readable; the default caps the demo model's pool at thousands of blocks.
    TuningPanel* tuning = window_.tuningPanel();
    restoreUtilization_ = tuning->utilizationSpin()->value();
    tuning->utilizationSpin()->setValue(utilizationForBlocks(300));
    QApplication::processEvents();
    // The load test is a benchmark run: an engine of its own, counting steps from 0.
    const int64_t firstStep = 0;
    window_.action(QStringLiteral("loadTestAction"))->trigger();
    polls_ = 0;
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [this, dock, panel, poll, firstStep] {
        const EngineSnapshot& s = panel->lastView().snapshot;
        const bool busy = s.num_running >= 6 && s.step_index >= firstStep + 60;
        if (!busy && ++polls_ < 400) {
            after(25, *poll);
            return;
        }
        QApplication::processEvents();
        const QString path = QDir(outDir_).filePath(QStringLiteral("08-engine-load-test.png"));
        const bool ok = dock->grab().save(path);
        std::printf("%s %s (running %d, waiting %d, steps %d, kv %.0f%%)\n",
                    ok ? "saved" : "FAILED", qPrintable(path), s.num_running, s.num_waiting,
                    panel->timeline()->stepCount(), s.kv_usage * 100);
        std::fflush(stdout);
        chartsUnderLoad();
    };
    after(25, *poll);
}

// Load tests one after the other for about 10 s; half-way the pool shrinks (utilization lowered
// through the Tuning dock, as a user would), so requests wait, get preempted and resume; the
// charts show it. Then the memory panel and the Tuning dock.
void ScreenshotRunner::chartsUnderLoad() {
    QDockWidget* dock = window_.dock(QStringLiteral("engineDock"));
    EnginePanel* panel = window_.enginePanel();
    TuningPanel* tuning = window_.tuningPanel();
    const double utilization = restoreUtilization_;
    panel->showTab(EnginePanel::ChartsTab);
    // Speculative decoding (prompt lookup, 4 drafts) during these load tests: the Speculation
    // tab then has acceptance to show.
    tuning->speculativeSpin()->setValue(4);
    polls_ = 0;
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [this, dock, panel, tuning, poll, utilization] {
        ++polls_; // one poll per 25 ms
        if (polls_ % 40 == 0 && polls_ <= 360)
            window_.action(QStringLiteral("loadTestAction"))->trigger();
        if (polls_ == 160)
            tuning->utilizationSpin()->setValue(utilizationForBlocks(100));
        if (polls_ < 400) {
            after(25, *poll);
            return;
        }
        QApplication::processEvents();
        grabWidget(dock, QStringLiteral("09-engine-charts"));
        panel->showTab(EnginePanel::SpeculationTab);
        after(300, [this, dock, panel, tuning, utilization] {
            grabWidget(dock, QStringLiteral("09s-engine-speculation"));
            panel->showTab(EnginePanel::MemoryTab);
            after(300, [this, dock, panel, tuning, utilization] {
                grabWidget(dock, QStringLiteral("10-memory-panel"));
                tuning->utilizationSpin()->setValue(utilization);
                panel->showTab(EnginePanel::BlocksTab);
                dock->setFloating(false);
                QDockWidget* tuningDock = window_.dock(QStringLiteral("tuningDock"));
                tuningDock->setFloating(true);
                tuningDock->resize(460, 760);
                tuningDock->show();
                tuningDock->raise();
                after(400, [this, dock, tuningDock] {
                    grabWidget(tuningDock, QStringLiteral("11-tuning-dock"));
                    tuningDock->setFloating(false);
                    dock->raise();
                    after(300, [this] { themesAndLanguages(); });
                });
            });
        });
    };
    after(25, *poll);
}

// The utilization (4 decimals, rounded up) whose plan holds about `blocks` KV blocks.
double ScreenshotRunner::utilizationForBlocks(int blocks) const {
    const MemoryPlan& m = window_.enginePanel()->lastView().snapshot.memory;
    if (m.device_bytes <= 0)
        return EngineTuning::kDefaultUtilization;
    const double u =
        double(m.weight_bytes + m.workspace_bytes + qint64(blocks) * m.bytes_per_block) /
        double(m.device_bytes);
    return std::clamp(std::ceil(u * 10000.0) / 10000.0, EngineTuning::kMinUtilization, 1.0);
}

void ScreenshotRunner::grabWidget(QWidget* w, const QString& name) {
    QApplication::processEvents();
    const QString path = QDir(outDir_).filePath(name + QStringLiteral(".png"));
    const bool ok = w->grab().save(path);
    std::printf("%s %s\n", ok ? "saved" : "FAILED", qPrintable(path));
    std::fflush(stdout);
}

void ScreenshotRunner::themesAndLanguages() {
    theme_.apply(ThemeChoice::Dark);
    after(300, [this] {
        save(QStringLiteral("05-dark"));
        // The charts (still holding the load tests' minute) and the memory panel in dark.
        floatDock(QStringLiteral("engineDock"), QSize(900, 760), [this](QDockWidget* d) {
            EnginePanel* panel = window_.enginePanel();
            panel->showTab(EnginePanel::ChartsTab);
            after(300, [this, d, panel] {
                grabWidget(d, QStringLiteral("12-engine-charts-dark"));
                panel->showTab(EnginePanel::BlocksTab);
                d->setFloating(false);
                translations_.apply(QStringLiteral("zh_CN"));
                after(400, [this] {
                    save(QStringLiteral("06-zh_CN"));
                    floatDock(QStringLiteral("tuningDock"), QSize(460, 760),
                              [this](QDockWidget* d) {
                                  after(300, [this, d] {
                                      grabWidget(d, QStringLiteral("13-tuning-dock-zh_CN-dark"));
                                      d->setFloating(false);
                                      window_.dock(QStringLiteral("engineDock"))->raise();
                                      theme_.apply(ThemeChoice::Light);
                                      window_.resize(1280, 720);
                                      after(400, [this] {
                                          save(QStringLiteral("07-zh_CN-light-1280x720"));
                                          translations_.apply(QStringLiteral("en"));
                                          window_.enginePanel()->showTab(EnginePanel::ChartsTab);
                                          after(400, [this] {
                                              save(QStringLiteral("14-charts-docked-1280x720"));
                                              window_.dock(QStringLiteral("tuningDock"))->raise();
                                              after(300, [this] {
                                                  save(QStringLiteral("15-tuning-docked-1280x720"));
                                                  memoryAndTuningDocked();
                                              });
                                          });
                                      });
                                  });
                              });
                });
            });
        });
    });
}

// The Memory tab and the Tuning dock docked in a 1280x800 window, in English and in Simplified
// Chinese (the texts of the plan's limit and of the backend's KV-cache dtype must fit there).
void ScreenshotRunner::memoryAndTuningDocked() {
    window_.resize(1280, 800);
    window_.dock(QStringLiteral("engineDock"))->raise();
    window_.enginePanel()->showTab(EnginePanel::MemoryTab);
    after(400, [this] {
        save(QStringLiteral("16-memory-docked-1280x800"));
        window_.dock(QStringLiteral("tuningDock"))->raise();
        after(300, [this] {
            save(QStringLiteral("17-tuning-docked-1280x800"));
            translations_.apply(QStringLiteral("zh_CN"));
            window_.dock(QStringLiteral("engineDock"))->raise();
            after(400, [this] {
                save(QStringLiteral("18-memory-docked-1280x800-zh_CN"));
                window_.dock(QStringLiteral("tuningDock"))->raise();
                after(300, [this] {
                    save(QStringLiteral("19-tuning-docked-1280x800-zh_CN"));
                    window_.dock(QStringLiteral("engineDock"))->raise();
                    window_.enginePanel()->showTab(EnginePanel::SpeculationTab);
                    after(400, [this] {
                        save(QStringLiteral("19s-speculation-docked-1280x800-zh_CN"));
                        window_.tuningPanel()->speculativeSpin()->setValue(0);
                        smallWindow();
                    });
                });
            });
        });
    });
}

// The default layout in a 1024x640 window (Chinese, then English) with the block map, and Qt's
// own file dialog in Chinese (qtbase_zh_CN: its labels and buttons).
void ScreenshotRunner::smallWindow() {
    window_.enginePanel()->showTab(EnginePanel::BlocksTab);
    window_.resize(1024, 640);
    after(400, [this] {
        save(QStringLiteral("20-default-1024x640-zh_CN"));
        auto* dialog =
            new QFileDialog(&window_, QString(), QDir::homePath(), ModelPanel::openDialogFilter());
        dialog->setOption(QFileDialog::DontUseNativeDialog);
        dialog->resize(760, 480);
        dialog->show();
        after(400, [this, dialog] {
            grabWidget(dialog, QStringLiteral("22-file-dialog-zh_CN"));
            dialog->deleteLater();
            translations_.apply(QStringLiteral("en"));
            after(400, [this] {
                save(QStringLiteral("21-default-1024x640"));
                conventions();
            });
        });
    });
}

// The chat conventions at 1280x800: an answer with an earlier version ("‹ 2/2 ›"), a deleted
// message's Undo in the status bar, a title being renamed in place, and the status bar after a
// failed load while the demo model stays loaded.
void ScreenshotRunner::conventions() {
    window_.resize(1280, 800);
    ConversationStore& store = controller_.store();
    auto c = store.createConversation(QStringLiteral("Conventions sample"));
    if (!c) {
        QApplication::exit(1);
        return;
    }
    ChatMessage q;
    q.conversationId = c->id;
    q.role = QStringLiteral("user");
    q.content = QStringLiteral("Name a prime number.");
    const auto question = store.addMessage(q);
    ChatMessage a = q;
    a.role = QStringLiteral("assistant");
    a.model = QStringLiteral("sample");
    a.content = QStringLiteral("Seven.");
    store.addMessage(a);
    a.content = QStringLiteral("Two, the only even one.");
    if (question)
        store.keepAnswerVersion(a, question->id);
    ChatMessage extra = q;
    extra.content = QStringLiteral("A message deleted for the screenshot.");
    const auto deleted = store.addMessage(extra);
    emit controller_.conversationCreated(*c);
    window_.openConversation(c->id);
    after(300, [this, deleted] {
        if (deleted)
            window_.chatView()->deleteMessage(deleted->id);
        window_.onModelLoading(QStringLiteral("/tmp/broken-model.gguf"));
        window_.onModelLoadFailed(QStringLiteral("not a GGUF file (bad magic)"));
        window_.action(QStringLiteral("renameConversationAction"))->trigger();
        after(400, [this] {
            save(QStringLiteral("23-conventions-1280x800"));
            benchmark();
        });
    });
}

void ScreenshotRunner::floatDock(const QString& name, const QSize& size,
                                 std::function<void(QDockWidget*)> then) {
    QDockWidget* d = window_.dock(name);
    d->setFloating(true);
    d->resize(size);
    d->show();
    d->raise();
    after(200, [d, then = std::move(then)] { then(d); });
}

// The Benchmark page at 1280x800: during a sweep over max_num_seqs (progress, live charts), the
// comparison it ends with (table and the chart over the swept setting), the runs list with a
// run's figures, and the comparison in Chinese. Quits.
void ScreenshotRunner::benchmark() {
    BenchmarkPage* page = window_.benchmarkPage();
    if (!page) {
        QApplication::exit(0);
        return;
    }
    window_.resize(1280, 800);
    window_.showBenchmark();
    page->applyPreset(BenchmarkPage::MaxNumSeqsSweep);
    page->findChild<QDoubleSpinBox*>(QStringLiteral("benchPrice"))->setValue(2.5);
    page->tabs()->setCurrentIndex(BenchmarkPage::SetupTab);
    after(300, [this, page] {
        save(QStringLiteral("24a-benchmark-setup-1280x800"));
        benchmarkSweep(page);
    });
}

void ScreenshotRunner::benchmarkSweep(BenchmarkPage* page) {
    if (!page->run().isEmpty()) {
        save(QStringLiteral("24-benchmark-refused"));
        QApplication::exit(1);
        return;
    }
    polls_ = 0;
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [this, page, poll] {
        const int v = page->progressBar()->value();
        if (v < 450 && ++polls_ < 2400 && page->cancelButton()->isEnabled()) {
            after(25, *poll);
            return;
        }
        save(QStringLiteral("24-benchmark-sweep-1280x800"));
        auto wait = std::make_shared<std::function<void()>>();
        *wait = [this, page, wait] {
            if (page->cancelButton()->isEnabled()) {
                after(100, *wait);
                return;
            }
            after(300, [this, page] {
                save(QStringLiteral("25-benchmark-compare-1280x800"));
                page->tabs()->setCurrentIndex(BenchmarkPage::RunsTab);
                after(300, [this] {
                    save(QStringLiteral("26-benchmark-runs-1280x800"));
                    translations_.apply(QStringLiteral("zh_CN"));
                    window_.benchmarkPage()->tabs()->setCurrentIndex(BenchmarkPage::CompareTab);
                    after(400, [this] {
                        save(QStringLiteral("27-benchmark-compare-zh_CN"));
                        translations_.apply(QStringLiteral("en"));
                        QApplication::exit(0);
                    });
                });
            });
        };
        after(100, *wait);
    };
    after(25, *poll);
}

} // namespace llmwb
