// The chat's storage bar offscreen: answers that could not be saved (a full disk: SQLite's
// max_page_count) keep their text in the bubble marked "not saved", the bar stays until they
// are stored and its Retry saving stores them; a message that could not be stored stays in the
// message box; a database opened read-only disables Send and says why; the bar in Chinese.
#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTranslator>
#include <QtTest>

#include "app/services/app_settings.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "scripted_engine.h"
#include "ui/chat_view.h"
#include "ui/eliding_label.h"
#include "ui/main_window.h"
#include "ui/message_widget.h"
#include "ui/storage_banner.h"

using namespace llmwb;
using llmwb::test::ScriptedEngine;

namespace {

void setPageLimit(Database& db, const QString& limit) {
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("PRAGMA max_page_count = %1").arg(limit)));
}

void fillDisk(Database& db) {
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("PRAGMA page_count")) && q.next());
    setPageLimit(db, q.value(0).toString());
}

} // namespace

class TestUiStorageBanner : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    int counter_ = 0;
    QString newPath() { return dir_.filePath(QStringLiteral("db%1.sqlite").arg(++counter_)); }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        registerGenerationTypes();
    }

    void unsavedAnswerStaysVisibleUntilSaved() {
        Database db(newPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        ChatView view(controller);
        view.resize(900, 700);
        view.show();
        const auto c = controller.newConversation(QStringLiteral("t"));
        view.setConversation(c->id);
        StorageBanner* banner = view.storageBanner();
        QVERIFY(!banner->isVisible());

        view.input()->setPlainText(QStringLiteral("hello"));
        view.send();
        QCOMPARE(engine.requests_.size(), 1);
        fillDisk(db);
        QStringList tokens;
        for (int i = 0; i < 176; ++i)
            tokens << QString(199, QChar(u'a' + i % 26)) + QLatin1Char(' ');
        engine.answer(engine.requests_.first(), tokens);

        // The bubble has the whole answer, marked not saved; the bar stays with Retry saving.
        MessageWidget* answer = view.messageWidgets().last();
        QCOMPARE(answer->message().content, tokens.join(QString()));
        QVERIFY2(answer->stateLabelText().contains(QStringLiteral("not saved")),
                 qPrintable(answer->stateLabelText()));
        QVERIFY(banner->isVisible());
        QVERIFY2(banner->text().contains(QStringLiteral("1 answer")) &&
                     banner->text().contains(QStringLiteral("full")),
                 qPrintable(banner->text()));
        QVERIFY(banner->retryButton()->isVisible());
        // Switching away and back shows the answer from memory, still marked.
        view.setConversation(0);
        view.setConversation(c->id);
        answer = view.messageWidgets().last();
        QCOMPARE(answer->message().content, tokens.join(QString()));
        QVERIFY(answer->stateLabelText().contains(QStringLiteral("not saved")));

        // Still full: Retry saving fails, the bar stays.
        QTest::mouseClick(banner->retryButton(), Qt::LeftButton);
        QVERIFY(banner->isVisible());
        setPageLimit(db, QStringLiteral("1000000"));
        QTest::mouseClick(banner->retryButton(), Qt::LeftButton);
        QVERIFY(!banner->isVisible());
        QVERIFY(!answer->stateLabelText().contains(QStringLiteral("not saved")));
        QCOMPARE(store.message(answer->messageId())->content, tokens.join(QString()));
        QCOMPARE(store.message(answer->messageId())->state, MessageState::Complete);
    }

    void refusedMessageStaysInTheMessageBox() {
        Database db(newPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        ChatView view(controller);
        view.show();
        const auto c = controller.newConversation(QStringLiteral("t"));
        view.setConversation(c->id);
        fillDisk(db);
        const QString text(40000, QLatin1Char('q'));
        view.input()->setPlainText(text);
        view.send();
        QCOMPARE(view.input()->toPlainText(), text);
        QVERIFY(view.messageWidgets().isEmpty());
        QVERIFY(view.storageBanner()->isVisible());
        QVERIFY(view.storageBanner()->text().contains(QStringLiteral("not sent")));
        setPageLimit(db, QStringLiteral("1000000"));
        view.send();
        QVERIFY(view.input()->toPlainText().isEmpty());
        QVERIFY(!view.storageBanner()->isVisible());
        QCOMPARE(view.messageWidgets().size(), 2);
    }

    void readOnlyDisablesSend() {
        Database db(newPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        ChatView view(controller);
        view.show();
        const auto c = controller.newConversation(QStringLiteral("t"));
        view.setConversation(c->id);
        QVERIFY(controller.send(c->id, QStringLiteral("hi")));
        engine.answer(engine.requests_.first(), {QStringLiteral("hello")});
        auto* regenerate = view.messageWidgets().last()->findChild<QToolButton*>(
            QStringLiteral("regenerateButton"));
        QVERIFY(regenerate && regenerate->isEnabled());
        QVERIFY(view.sendButton()->isEnabled());
        const QString reason = QStringLiteral("The chat database /x/llmwb.sqlite is read-only.");
        controller.setReadOnlyReason(reason);
        view.setReadOnlyReason(reason);
        QVERIFY(!view.sendButton()->isEnabled());
        QVERIFY(view.sendButton()->toolTip().contains(reason));
        QVERIFY(view.storageBanner()->isVisible());
        QVERIFY(view.storageBanner()->text().contains(reason));
        QVERIFY(!view.storageBanner()->retryButton()->isVisible());
        QVERIFY(!regenerate->isEnabled());
    }

    // Quitting with an answer that is only in memory asks first (Cancel keeps the window);
    // once it can be stored, quitting stores it and asks nothing.
    void quittingWithUnsavedAnswersAsks() {
        Database db(newPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        AppSettings settings(dir_.filePath(QStringLiteral("quit.ini")));
        MainWindow w(controller, settings);
        w.show();
        const auto c = controller.newConversation(QStringLiteral("t"));
        QVERIFY(controller.send(c->id, QStringLiteral("hello")));
        fillDisk(db);
        engine.answer(engine.requests_.first(), {QString(60000, QLatin1Char('z'))});
        QCOMPARE(controller.unsavedCount(), 1);
        QString asked;
        QTimer::singleShot(0, this, [&asked] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box)
                return;
            asked = box->text();
            box->button(QMessageBox::Cancel)->click();
        });
        QVERIFY(!w.close());
        QVERIFY2(asked.contains(QStringLiteral("lost")), qPrintable(asked));
        QVERIFY(w.isVisible());
        setPageLimit(db, QStringLiteral("1000000"));
        QVERIFY(w.close());
        QCOMPARE(controller.unsavedCount(), 0);
        QCOMPARE(store.messages(c->id).last().content.size(), 60000);
    }

    void barInChinese() {
        QTranslator zh;
        QVERIFY(zh.load(QStringLiteral(":/i18n/llmwb_zh_CN.qm")));
        QApplication::installTranslator(&zh);
        StorageBanner banner;
        banner.setSaveStatus(2, QStringLiteral("database or disk is full"));
        QVERIFY2(banner.text().contains(QStringLiteral("尚未保存")), qPrintable(banner.text()));
        QCOMPARE(banner.retryButton()->text(), QStringLiteral("重试保存"));
        QApplication::removeTranslator(&zh);
        QTRY_VERIFY(banner.text().contains(QStringLiteral("2 answer")));
    }
};

QTEST_MAIN(TestUiStorageBanner)
#include "tst_ui_storage_banner.moc"
