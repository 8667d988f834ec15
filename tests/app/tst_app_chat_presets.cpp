// Settings presets in the chat database (PresetStore): save (create and replace), list by
// name, rename (refused onto an existing name), delete, names trimmed and never empty, values
// kept across reopening the file, and stored JSON that is not an object read as empty.
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include "app/services/database.h"
#include "app/services/preset_store.h"

using namespace llmwb;

class TestAppChatPresets : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void crudAndReopen() {
        const QString path = dir_.filePath("presets.sqlite");
        {
            Database db(path);
            QVERIFY(db.open());
            PresetStore store(db);
            QVERIFY(store.presets().isEmpty());
            QVERIFY(!store.preset("Precise"));

            const QJsonObject precise{{"temperature", 0.1}, {"top_p", 0.5}};
            const auto p = store.savePreset("  Precise ", precise);
            QVERIFY2(p, qPrintable(store.errorString()));
            QCOMPARE(p->name, QStringLiteral("Precise"));
            QCOMPARE(p->settings, precise);
            QVERIFY(p->id > 0);
            QVERIFY(p->created.isValid());

            const auto creative = store.savePreset("creative", QJsonObject{{"temperature", 1.2}});
            QVERIFY(creative);
            // Saving an existing name replaces its settings, same row.
            const QJsonObject precise2{{"temperature", 0.0}, {"top_k", 1}};
            const auto replaced = store.savePreset("Precise", precise2);
            QVERIFY(replaced);
            QCOMPARE(replaced->id, p->id);
            QCOMPARE(replaced->settings, precise2);

            QList<SettingsPreset> all = store.presets();
            QCOMPARE(all.size(), 2);
            QCOMPARE(all[0].name, QStringLiteral("creative")); // by name, any case
            QCOMPARE(all[1].name, QStringLiteral("Precise"));

            QVERIFY(!store.savePreset("   ", {}));
            QVERIFY(!store.errorString().isEmpty());

            QVERIFY(!store.renamePreset("creative", "Precise")); // taken
            QVERIFY(!store.renamePreset("nope", "Other"));
            QVERIFY(store.renamePreset("creative", "Creative"));
            QVERIFY(store.preset("Creative"));
            QVERIFY(!store.preset("creative"));

            QVERIFY(store.deletePreset("Creative"));
            QVERIFY(!store.deletePreset("Creative"));
            QCOMPARE(store.presets().size(), 1);
        }
        Database db(path);
        QVERIFY(db.open());
        PresetStore store(db);
        const auto p = store.preset("Precise");
        QVERIFY(p);
        QCOMPARE(p->settings, (QJsonObject{{"temperature", 0.0}, {"top_k", 1}}));
        QCOMPARE(store.presets().size(), 1);
    }

    void storedGarbageReadsAsEmpty() {
        Database db(dir_.filePath("garbage.sqlite"));
        QVERIFY(db.open());
        QSqlQuery q(db.connection());
        QVERIFY(q.exec("INSERT INTO presets(name, settings, created_at) VALUES "
                       "('broken', '{not json', 0), ('array', '[1,2]', 0)"));
        PresetStore store(db);
        const auto all = store.presets();
        QCOMPARE(all.size(), 2);
        for (const SettingsPreset& p : all)
            QVERIFY(p.settings.isEmpty());
        // And it can be repaired by saving.
        QVERIFY(store.savePreset("broken", QJsonObject{{"temperature", 0.7}}));
        QCOMPARE(store.preset("broken")->settings.value("temperature").toDouble(), 0.7);
    }
};

QTEST_GUILESS_MAIN(TestAppChatPresets)
#include "tst_app_chat_presets.moc"
