// The end of an answer in the chat: every finish reason (stop, length, cancelled, context,
// KV pool, error with its message) shown on the message, stored in SQLite and shown again after
// the database is reopened. Offscreen, against a scripted engine.
#include <QAbstractItemModelTester>
#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QToolButton>
#include <QTranslator>
#include <QVBoxLayout>
#include <QtTest>

#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "scripted_engine.h"
#include "ui/chat_view.h"
#include "ui/conversation_list_model.h"
#include "ui/markdown_body.h"
#include "ui/markdown_view.h"
#include "ui/message_widget.h"
#include "ui/model_panel.h"

using namespace llmwb;
using llmwb::test::ScriptedEngine;

class TestUiFinishReasons : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    int counter_ = 0;
    QString newPath(const char* stem) {
        return dir_.filePath(QStringLiteral("%1%2").arg(QLatin1String(stem)).arg(++counter_));
    }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // Why an answer ended reaches the widget as the engine's enum and is said in words there;
    // it survives the database: a new view over the reopened file shows the same.
    void finishReasonIsShownAndStored() {
        QCOMPARE(MessageWidget::stateText([] {
                     ChatMessage m;
                     m.state = MessageState::Complete;
                     m.finishReason = FinishReason::Stop;
                     return m;
                 }()),
                 QString());
        const QString dbPath = newPath("finish.sqlite");
        qint64 convId = 0;
        {
            Database db(dbPath);
            QVERIFY(db.open());
            ConversationStore store(db);
            ChatController controller(store);
            ScriptedEngine engine(controller);
            ChatView view(controller);
            view.resize(700, 600);
            view.show();
            const auto conv = controller.newConversation();
            QVERIFY(conv);
            convId = conv->id;
            view.setConversation(convId);
            const struct {
                FinishReason reason;
                MessageState state;
                QString text;
            } cases[] = {{FinishReason::Length, MessageState::Complete,
                          QStringLiteral("cut off at the token limit")},
                         {FinishReason::Stop, MessageState::Complete, QString()},
                         {FinishReason::Aborted, MessageState::Stopped, QStringLiteral("stopped")}};
            int i = 0;
            for (const auto& k : cases) {
                view.input()->setPlainText(QStringLiteral("Question %1").arg(i));
                QTest::mouseClick(view.sendButton(), Qt::LeftButton);
                QCOMPARE(engine.requests_.size(), i + 1);
                engine.finish(engine.requests_[i], {"An ", "answer"}, k.reason);
                const auto widgets = view.messageWidgets();
                QCOMPARE(widgets.size(), 2 * (i + 1));
                MessageWidget* w = widgets.last();
                QCOMPARE(w->message().finishReason, k.reason);
                QCOMPARE(w->message().state, k.state);
                QCOMPARE(w->stateLabelText(), k.text);
                ++i;
            }
        }
        Database db(dbPath);
        QVERIFY(db.open());
        ConversationStore store(db);
        const auto msgs = store.messages(convId);
        QCOMPARE(msgs.size(), 6);
        QCOMPARE(msgs[1].finishReason, FinishReason::Length);
        QCOMPARE(msgs[3].finishReason, FinishReason::Stop);
        QCOMPARE(msgs[5].finishReason, FinishReason::Aborted);
        ChatController controller(store);
        ChatView view(controller);
        view.setConversation(convId);
        const auto widgets = view.messageWidgets();
        QCOMPARE(widgets.size(), 6);
        QCOMPARE(widgets[1]->stateLabelText(), QStringLiteral("cut off at the token limit"));
        QCOMPARE(widgets[3]->stateLabelText(), QString());
        QCOMPARE(widgets[5]->stateLabelText(), QStringLiteral("stopped"));
    }

    // The engine's cut-offs and a failure, each in words on the message with a tooltip that
    // says why (the error's own message for a failure), and the same after reopening the file.
    void cutOffsAndErrorsAreShown() {
        const QString dbPath = newPath("cutoffs.sqlite");
        qint64 convId = 0;
        const QString error =
            QStringLiteral("The conversation (10,640 tokens) no longer fits the KV cache pool "
                           "(304 tokens; the model's context is 32,768): raise GPU memory "
                           "utilization in the Tuning dock, or start a new chat.");
        auto check = [&](const QList<MessageWidget*>& widgets) {
            QCOMPARE(widgets.size(), 6);
            QCOMPARE(widgets[1]->message().state, MessageState::Truncated);
            QCOMPARE(widgets[1]->stateLabelText(), QStringLiteral("cut off: KV cache full"));
            QVERIFY(MessageWidget::stateToolTip(widgets[1]->message()).contains("KV cache pool"));
            QCOMPARE(widgets[3]->message().state, MessageState::Truncated);
            QCOMPARE(widgets[3]->stateLabelText(), QStringLiteral("cut off: context full"));
            QVERIFY(MessageWidget::stateToolTip(widgets[3]->message()).contains("context"));
            QCOMPARE(widgets[5]->message().state, MessageState::Error);
            QCOMPARE(widgets[5]->message().error, error);
            QVERIFY2(widgets[5]->stateLabelText().startsWith(QStringLiteral("failed: The conv")),
                     qPrintable(widgets[5]->stateLabelText()));
            QVERIFY(widgets[5]->stateLabelText().size() < 70); // the tooltip has the rest
            // ... and the message itself shows the whole error, wrapped; no other message does.
            auto* errorLabel = widgets[5]->findChild<QLabel*>(QStringLiteral("messageError"));
            QVERIFY(errorLabel);
            QCOMPARE(errorLabel->text(), QStringLiteral("The generation failed: ") + error);
            QVERIFY(!errorLabel->isHidden());
            QVERIFY(widgets[1]->findChild<QLabel*>(QStringLiteral("messageError"))->isHidden());
            QCOMPARE(MessageWidget::stateToolTip(widgets[5]->message()),
                     QStringLiteral("The generation failed: ") + error);
        };
        {
            Database db(dbPath);
            QVERIFY(db.open());
            ConversationStore store(db);
            ChatController controller(store);
            ScriptedEngine engine(controller);
            ChatView view(controller);
            view.resize(700, 600);
            view.show();
            const auto conv = controller.newConversation();
            QVERIFY(conv);
            convId = conv->id;
            view.setConversation(convId);
            for (int i = 0; i < 3; ++i) {
                view.input()->setPlainText(QStringLiteral("Question %1").arg(i));
                QTest::mouseClick(view.sendButton(), Qt::LeftButton);
                QCOMPARE(engine.requests_.size(), i + 1);
                const GenerationRequest& r = engine.requests_[i];
                if (i == 0)
                    engine.finish(r, {"An ", "answer"}, FinishReason::KvPool);
                else if (i == 1)
                    engine.finish(r, {"An ", "answer"}, FinishReason::Context);
                else
                    controller.onFailed(r.requestId, r.conversationId, error);
            }
            check(view.messageWidgets());
        }
        Database db(dbPath);
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ChatView view(controller);
        view.setConversation(convId);
        check(view.messageWidgets());
    }
};

QTEST_MAIN(TestUiFinishReasons)
#include "tst_ui_finish_reasons.moc"
