// The app's persistent preferences (QSettings): theme, language, recent models, the window
// layout and the default sampling settings of new conversations.
#pragma once

#include <QByteArray>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <memory>

#include "app/services/generation_types.h"

namespace llmwb {

enum class ThemeChoice { System, Light, Dark };

// The Local server (an OpenAI-compatible server over the app's engine): whether it runs, where
// it listens, the API key clients must send (empty: none) and the CORS origins allowed.
struct LocalServerSettings {
    bool enabled = false;
    QString host = QStringLiteral("127.0.0.1");
    int port = 8000;
    QString apiKey;
    QStringList allowedOrigins;
    int maxWaiting = 1024; // sequences waiting before 429 (as `llmwb serve --max-waiting`)
    bool operator==(const LocalServerSettings&) const = default;
};

// Makes the file behind `settings` readable and writable by its owner only (0600), after
// writing what is pending: it holds API keys (the Local server's, the remote endpoints'). QSettings
// keeps a file's permissions when it rewrites it. False when the file could not be changed (a
// native, non-file store: nothing to do).
bool restrictSettingsToOwner(QSettings& settings);

class AppSettings {
  public:
    static constexpr int kMaxRecentModels = 10;

    // iniPath empty: the platform's native settings for the application (organization and
    // application names set in main()). Tests pass a file in a temporary folder.
    explicit AppSettings(const QString& iniPath = {});

    ThemeChoice theme() const;
    void setTheme(ThemeChoice t);

    // "" = follow the system, "en", "zh_CN".
    QString language() const;
    void setLanguage(const QString& code);

    QStringList recentModels() const; // most recent first
    void addRecentModel(const QString& path);
    void removeRecentModel(const QString& path);
    QString lastModel() const; // "" = the demo model

    // The first-run panel (ui/first_run_dialog.h): shown once on a fresh profile; the folders
    // the user added to model discovery.
    bool firstRunDone() const;
    void setFirstRunDone(bool done);
    QStringList modelFolders() const;
    void setModelFolders(const QStringList& folders);

    QByteArray windowGeometry() const;
    QByteArray windowState() const;
    void setWindowLayout(const QByteArray& geometry, const QByteArray& state);

    SamplingSettings defaultSampling() const;
    void setDefaultSampling(const SamplingSettings& s);

    // The Tuning dock's engine settings (defaults when absent; clamped when out of range).
    EngineTuning engineTuning() const;
    void setEngineTuning(const EngineTuning& t);
    // Forgets the engine tuning and the default sampling: both read back as defaults.
    void resetTuning();

    // The Model panel's device: "auto" (default), "cpu" or "cuda" (unknown values read "auto").
    QString device() const;
    void setDevice(const QString& preference);
    // The Model panel's weight type: "auto" (default, as stored) or "bfloat16" (unknown: "auto").
    QString weightDtype() const;
    void setWeightDtype(const QString& dtype);

    // The Benchmark page's cost figures: a price per GPU- or machine-hour (0: not set) and the
    // currency's symbol as the user writes it. Values out of range read as 0 / "$".
    double benchPricePerHour() const;
    QString benchCurrency() const;
    void setBenchPrice(double perHour, const QString& currency);
    // The Local server's settings (defaults when absent; a port out of 0..65535 reads 8000;
    // 0: any free port).
    LocalServerSettings localServer() const;
    void setLocalServer(const LocalServerSettings& s);

    void sync();
    QSettings& raw() { return *settings_; }

  private:
    std::unique_ptr<QSettings> settings_;
};

} // namespace llmwb
