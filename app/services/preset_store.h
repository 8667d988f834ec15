// Named settings presets in the chat database (table `presets`, schema version 2): a preset is
// a name and a JSON object of settings (sampling, engine tuning, ...), e.g. "Precise" or
// "Creative". Saving an existing name replaces its settings. Used on the thread that opened the
// Database; stored JSON is external input (the file may have been edited) and anything that is
// not an object reads as an empty object.
#pragma once

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace llmwb {

class Database;

struct SettingsPreset {
    qint64 id = 0;
    QString name;
    QJsonObject settings;
    QDateTime created;
};

class PresetStore {
    Q_DECLARE_TR_FUNCTIONS(llmwb::PresetStore)

  public:
    explicit PresetStore(Database& db);

    QList<SettingsPreset> presets(); // by name
    std::optional<SettingsPreset> preset(const QString& name);
    // Creates the preset or replaces the settings of the one with this name (in one
    // transaction). The name is trimmed; an empty name is an error.
    std::optional<SettingsPreset> savePreset(const QString& name, const QJsonObject& settings);
    bool renamePreset(const QString& from, const QString& to); // false if `to` exists
    bool deletePreset(const QString& name);                    // false if there is none

    QString errorString() const { return error_; }

  private:
    bool fail(const QString& detail);

    Database& db_;
    QString error_;
};

} // namespace llmwb
