// `llm-workbench --screenshot DIR`: drives the real window through its main states and saves
// each as a PNG (QWidget::grab): empty chat, Markdown rendering, a streaming answer, the
// finished answer with its figures, the Engine dock during a load test (KV block map and
// batch timeline), the charts under load (the pool shrunk through the Tuning dock meanwhile),
// the memory panel, the Tuning dock, the dark theme, Simplified Chinese, 1280x720, and the
// Memory tab and the Tuning dock docked at 1280x800 in English and Chinese, the default layout at
// 1024x640 (Chinese and English), Qt's file dialog in Chinese, and the chat conventions (an
// answer's versions, Undo, rename in place, the status bar after a failed load), and the
// Benchmark page (a sweep running, its comparison, the runs, in Chinese). Quits.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "app/services/generation_types.h"

class QDockWidget;
class QSize;
class QWidget;

namespace llmwb {

class BenchmarkPage;
class ChatController;
class MainWindow;
class ThemeController;
class TranslationLoader;

class ScreenshotRunner : public QObject {
    Q_OBJECT

  public:
    ScreenshotRunner(MainWindow& window, ChatController& controller, ThemeController& theme,
                     TranslationLoader& translations, const QString& outDir,
                     QObject* parent = nullptr);

  public slots:
    void onModelLoaded(const llmwb::ModelMetadata& m);
    void onModelLoadFailed(const QString& message);

  private:
    void save(const QString& name);
    void after(int ms, std::function<void()> fn);
    void showMarkdownSample();
    void startStreaming();
    void finishUp();
    void loadTest();
    void chartsUnderLoad();
    void grabWidget(QWidget* w, const QString& name);
    double utilizationForBlocks(int blocks) const;
    void floatDock(const QString& name, const QSize& size, std::function<void(QDockWidget*)> then);
    void themesAndLanguages();
    void memoryAndTuningDocked();
    void smallWindow();
    void conventions();
    void benchmark();
    void benchmarkSweep(BenchmarkPage* page);

    MainWindow& window_;
    ChatController& controller_;
    ThemeController& theme_;
    TranslationLoader& translations_;
    QString outDir_;
    bool started_ = false;
    bool grabbedStreaming_ = false;
    int polls_ = 0;
    double restoreUtilization_ = 0;
};

} // namespace llmwb
