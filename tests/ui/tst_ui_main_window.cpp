// Widgets and item models offscreen: the conversation list and search models under
// QAbstractItemModelTester, the main window's docks, shortcuts and saved layout, the chat flow
// against a scripted engine, Markdown code blocks, drag & drop of a model, and the zh_CN
// translation (complete, and applied live).
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTranslator>
#include <QXmlStreamReader>
#include <QtTest>

#include "app/services/app_settings.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "ui/chat_view.h"
#include "ui/conversation_list_model.h"
#include "ui/engine_panel.h"
#include "ui/main_window.h"
#include "ui/markdown_view.h"
#include "ui/memory_panel.h"
#include "ui/message_widget.h"
#include "ui/model_panel.h"
#include "ui/search_results_model.h"
#include "ui/tuning_panel.h"

using namespace llmwb;

namespace {

// Plays the engine: answers every request with fixed tokens, or holds it until release().
class ScriptedEngine : public QObject {
  public:
    explicit ScriptedEngine(ChatController& c) : controller_(c) {
        connect(&c, &ChatController::generateRequested, this, [this](const GenerationRequest& r) {
            pending_ = r;
            ++requests_;
        });
        connect(&c, &ChatController::stopRequested, this, [this](quint64 id) { stopped_ = id; });
    }
    void release(const QStringList& tokens, bool cancelled = false) {
        for (const QString& t : tokens)
            controller_.onToken(pending_.requestId, pending_.conversationId, t);
        GenerationStats s;
        s.requestId = pending_.requestId;
        s.conversationId = pending_.conversationId;
        s.promptTokens = 11;
        s.completionTokens = tokens.size();
        s.ttftMs = 25;
        s.tokensPerSecond = 50.5;
        s.finishReason = cancelled ? FinishReason::Aborted : FinishReason::Stop;
        controller_.onFinished(s);
    }
    GenerationRequest pending_;
    int requests_ = 0;
    quint64 stopped_ = 0;

  private:
    ChatController& controller_;
};

} // namespace

class TestUiMainWindow : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    int dbCounter_ = 0;
    QString newDbPath() { return dir_.filePath(QStringLiteral("ui%1.sqlite").arg(++dbCounter_)); }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void conversationListModel() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        store.createConversation("existing");
        ChatController controller(store);
        ConversationListModel model(store);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(&controller, &ChatController::conversationCreated, &model,
                &ConversationListModel::addConversation);
        connect(&controller, &ChatController::conversationDeleted, &model,
                &ConversationListModel::removeConversation);
        connect(&controller, &ChatController::conversationChanged, &model,
                &ConversationListModel::refreshConversation);
        QCOMPARE(model.rowCount(), 1);
        const auto a = controller.newConversation();
        const auto b = controller.newConversation("named");
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.idAt(0), b->id);
        QCOMPARE(model.index(1).data().toString(), QStringLiteral("New chat")); // empty title
        QCOMPARE(model.index(1).data(ConversationListModel::IdRole).toLongLong(), a->id);
        // Updating a moves it to the top.
        Conversation renamed = *a;
        renamed.title = "renamed";
        QTest::qWait(3);
        QVERIFY(controller.updateConversation(renamed));
        QCOMPARE(model.idAt(0), a->id);
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("renamed"));
        QVERIFY(controller.deleteConversation(b->id));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.rowOf(b->id), -1);
        model.reload();
        QCOMPARE(model.rowCount(), 2);
    }

    void searchResultsModel() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        auto c = store.createConversation("t");
        ChatMessage m;
        m.conversationId = c->id;
        m.role = "user";
        m.content = "a <script>alert(1)</script> about caching";
        store.addMessage(m);
        SearchResultsModel model(store);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setQuery("caching");
        QCOMPARE(model.rowCount(), 1);
        const QString html = model.index(0).data(SearchResultsModel::SnippetHtmlRole).toString();
        QVERIFY2(html.contains("<b>caching</b>"), qPrintable(html));
        QVERIFY2(!html.contains("<script>"), qPrintable(html));
        QCOMPARE(model.index(0).data(SearchResultsModel::ConversationIdRole).toLongLong(), c->id);
        model.setQuery("");
        QCOMPARE(model.rowCount(), 0);
    }

    void windowDocksShortcutsAndLayout() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(dir_.filePath("layout.ini"));
        {
            MainWindow w(controller, settings);
            for (const char* name : {"conversationsDock", "modelDock", "engineDock", "tuningDock"})
                QVERIFY2(w.dock(QLatin1String(name)), name);
            QCOMPARE(w.action("newChatAction")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_N));
            QCOMPARE(w.action("sendAction")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Return));
            QCOMPARE(w.action("stopAction")->shortcut(), QKeySequence(Qt::Key_Escape));
            QCOMPARE(w.action("findAction")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_F));
            QCOMPARE(w.action("quitAction")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Q));
            // Fits 1280x720.
            QVERIFY(w.minimumSizeHint().width() <= 1280);
            QVERIFY(w.minimumSizeHint().height() <= 720);
            w.resize(1280, 720);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QCOMPARE(w.size(), QSize(1280, 720));
            w.dock("modelDock")->hide();
            w.saveLayout();
        }
        MainWindow w2(controller, settings);
        w2.restoreLayout();
        w2.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w2));
        QVERIFY(w2.dock("modelDock")->isHidden());
        QVERIFY(!w2.dock("conversationsDock")->isHidden());
        QCOMPARE(w2.size(), QSize(1280, 720));

        // Ctrl+N creates and opens a conversation.
        QSignalSpy created(&controller, &ChatController::conversationCreated);
        w2.action("newChatAction")->trigger();
        QCOMPARE(created.size(), 1);
        QVERIFY(w2.chatView()->conversationId() != 0);
    }

    void chatFlow() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        AppSettings settings(dir_.filePath("chat.ini"));
        MainWindow w(controller, settings);
        w.show();
        ChatView* chat = w.chatView();
        chat->input()->setPlainText("Hello **world**");
        w.action("sendAction")->trigger(); // no conversation yet: one is created
        QVERIFY(chat->conversationId() != 0);
        QCOMPARE(engine.requests_, 1);
        QVERIFY(chat->input()->toPlainText().isEmpty());
        QVERIFY(!chat->sendButton()->isEnabled());
        QVERIFY(chat->stopButton()->isEnabled());
        auto widgets = chat->messageWidgets();
        QCOMPARE(widgets.size(), 2);
        QCOMPARE(widgets[0]->message().content, QStringLiteral("Hello **world**"));
        QCOMPARE(engine.pending_.messages.size(), 1);
        QCOMPARE(engine.pending_.messages[0].content, QStringLiteral("Hello **world**"));

        // Esc asks the engine to stop this request.
        w.action("stopAction")->trigger();
        QCOMPARE(engine.stopped_, engine.pending_.requestId);
        engine.release({"Hi", " there", "\n\n```\ncode\n```"}, true);
        QVERIFY(chat->sendButton()->isEnabled());
        widgets = chat->messageWidgets();
        QCOMPARE(widgets[1]->message().content, QStringLiteral("Hi there\n\n```\ncode\n```"));
        QCOMPARE(widgets[1]->message().state, MessageState::Stopped);
        QVERIFY2(widgets[1]->footerText().contains("50.5"), qPrintable(widgets[1]->footerText()));
        QVERIFY(widgets[1]->footerText().contains("25"));
        QCOMPARE(widgets[1]->body()->codeBlockCount(), 1);

        // Regenerate the last answer, then edit and resend the question.
        w.action("regenerateAction")->trigger();
        QCOMPARE(engine.requests_, 2);
        engine.release({"Second"});
        widgets = chat->messageWidgets();
        QCOMPARE(widgets.size(), 2);
        QCOMPARE(widgets[1]->message().content, QStringLiteral("Second"));
        QCOMPARE(widgets[1]->message().state, MessageState::Complete);
        emit widgets[0]->resendRequested(widgets[0]->messageId(), "Edited question");
        QCOMPARE(engine.requests_, 3);
        QCOMPARE(engine.pending_.messages.last().content, QStringLiteral("Edited question"));
        engine.release({"Third"});
        widgets = chat->messageWidgets();
        QCOMPARE(widgets.size(), 2);
        QCOMPARE(widgets[0]->message().content, QStringLiteral("Edited question"));
        QCOMPARE(store.messages(chat->conversationId()).size(), 2);

        // Delete the answer.
        emit widgets[1]->deleteRequested(widgets[1]->messageId());
        QTRY_COMPARE(chat->messageWidgets().size(), 1);
        QCOMPARE(store.messages(chat->conversationId()).size(), 1);

        // Export writes the stored conversation.
        const QString md = dir_.filePath("export.md");
        QVERIFY(w.exportConversation(chat->conversationId(), md, "md"));
        QFile f(md);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("Edited question"));
    }

    // The message box has the keyboard when the window opens, after New chat, after switching
    // conversations and after an answer; a search the user is typing keeps it.
    void messageBoxHasTheFocus() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        const auto older = controller.newConversation(QStringLiteral("older"));
        QVERIFY(older);
        AppSettings settings(dir_.filePath("focus.ini"));
        MainWindow w(controller, settings);
        w.resize(1280, 800);
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        ChatView* chat = w.chatView();
        QPlainTextEdit* input = chat->input();
        QTRY_COMPARE(QApplication::focusWidget(), input);

        // Ctrl+F goes to the search field; New chat comes back to the message box.
        auto* search = w.findChild<QLineEdit*>(QStringLiteral("conversationSearch"));
        QVERIFY(search);
        w.action("findAction")->trigger();
        QCOMPARE(QApplication::focusWidget(), search);
        w.action("newChatAction")->trigger();
        QVERIFY(chat->conversationId() != older->id);
        QCOMPARE(QApplication::focusWidget(), input);

        // Clicking a conversation in the list opens it, ready to type.
        auto* list = w.findChild<QListView*>(QStringLiteral("conversationList"));
        QVERIFY(list);
        const QModelIndex olderIndex =
            list->model()->index(w.conversationModel()->rowOf(older->id), 0);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                          list->visualRect(olderIndex).center());
        QCOMPARE(chat->conversationId(), older->id);
        QCOMPARE(QApplication::focusWidget(), input);
        // Enter on a conversation in the list, too.
        w.action("newChatAction")->trigger();
        list->setFocus(Qt::MouseFocusReason);
        list->setCurrentIndex(list->model()->index(w.conversationModel()->rowOf(older->id), 0));
        QTest::keyClick(list, Qt::Key_Return);
        QCOMPARE(chat->conversationId(), older->id);
        QCOMPARE(QApplication::focusWidget(), input);

        // Enter sends; the focus is in the box again when the answer has finished.
        QTest::keyClicks(input, QStringLiteral("question"));
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_, 1);
        QCOMPARE(engine.pending_.messages.last().content, QStringLiteral("question"));
        engine.release({"answer"});
        QCOMPARE(QApplication::focusWidget(), input);

        // The user searches while the next answer streams: the search keeps the keyboard.
        QTest::keyClicks(input, QStringLiteral("again"));
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_, 2);
        w.action("findAction")->trigger();
        QTest::keyClicks(search, QStringLiteral("ques"));
        engine.release({"second answer"});
        QCOMPARE(QApplication::focusWidget(), search);
        QCOMPARE(search->text(), QStringLiteral("ques"));
    }

    void markdownCodeBlocksAreMonospace() {
        MarkdownView view;
        view.resize(400, 100);
        view.setMarkdownText("text\n\n```cpp\nint x = 1;\n```\n\nmore `inline`");
        QCOMPARE(view.codeBlockCount(), 1);
        bool foundCode = false;
        for (QTextBlock b = view.document()->begin(); b.isValid(); b = b.next()) {
            if (b.text().contains("int x")) {
                foundCode = true;
                const QFont f = b.charFormat().font();
                QTextCursor c(b);
                c.movePosition(QTextCursor::NextCharacter);
                QVERIFY(c.charFormat().fontFixedPitch() ||
                        QFontInfo(c.charFormat().font()).fixedPitch());
                QVERIFY(b.blockFormat().background().style() != Qt::NoBrush);
            }
        }
        QVERIFY(foundCode);
        QVERIFY(view.sizeHint().height() > 40); // as tall as its content
    }

    void droppingAModelOpensIt() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(dir_.filePath("drop.ini"));
        MainWindow w(controller, settings);
        QSignalSpy open(&w, &MainWindow::openModelRequested);
        const QString gguf = dir_.filePath("model.gguf");
        QFile f(gguf);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(gguf)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&w, &drop);
        QCOMPARE(open.size(), 1);
        QCOMPARE(open.first().first().toString(), QFileInfo(gguf).absoluteFilePath());
        // Other files are refused.
        QMimeData text;
        text.setUrls({QUrl::fromLocalFile(dir_.filePath("notes.txt"))});
        QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton,
                                Qt::NoModifier);
        refused.setAccepted(false);
        QCoreApplication::sendEvent(&w, &refused);
        QVERIFY(!refused.isAccepted());
    }

    // Loading progress and Cancel go through the Model panel; a cancelled load shows the
    // previous model again. Tuning changes leave the window as signals, and the default
    // sampling reaches new conversations.
    void loadingProgressCancelAndTuning() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(dir_.filePath("tuning.ini"));
        MainWindow w(controller, settings);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ModelMetadata first;
        first.name = QStringLiteral("First model");
        first.path = dir_.filePath("first.gguf");
        first.dtypeSummary = {QStringLiteral("attention: F32 ×4")};
        w.onModelLoaded(first);
        QVERIFY(w.enginePanel()->memory()->fieldText("memoryDtypes").contains("attention: F32 ×4"));

        QSignalSpy cancel(&w, &MainWindow::loadCancelRequested);
        w.onModelLoading(dir_.filePath("second.gguf"));
        w.onLoadProgress(40, QStringLiteral("Validating the model"));
        auto* bar = w.modelPanel()->findChild<QProgressBar*>("loadProgress");
        QVERIFY(bar && bar->isVisible());
        QCOMPARE(bar->value(), 40);
        QVERIFY(w.modelPanel()->isLoading());
        auto* button = w.modelPanel()->findChild<QPushButton*>("cancelLoad");
        QVERIFY(button && button->isVisible());
        button->click();
        QCOMPARE(cancel.size(), 1);
        w.onLoadCancelled(dir_.filePath("second.gguf"));
        QVERIFY(!w.modelPanel()->isLoading());
        QCOMPARE(w.modelPanel()->fieldText("modelName"), QStringLiteral("First model"));

        QSignalSpy tuning(&w, &MainWindow::tuningChanged);
        w.tuningPanel()->maxNumSeqsSpin()->setValue(5);
        QCOMPARE(tuning.size(), 1);
        QCOMPARE(tuning.first().first().value<EngineTuning>().maxNumSeqs, 5);
        w.tuningPanel()->temperatureSpin()->setValue(1.25);
        const auto c = controller.newConversation();
        QVERIFY(c.has_value());
        QCOMPARE(SamplingSettings::fromJson(c->sampling).temperature, 1.25);

        // Engine views reach the Tuning dock (the resulting pool) and the Engine dock.
        EngineView v;
        v.snapshot.memory.num_blocks = 321;
        v.snapshot.memory.block_size = 16;
        v.snapshot.memory.device_bytes = qint64(8) << 30;
        v.snapshot.num_running = 1;
        w.onEngineView(v);
        QVERIFY(w.tuningPanel()->planLabel()->text().contains(QStringLiteral("321")));
        QVERIFY(!w.tuningPanel()->blockSizeCombo()->isEnabled()); // busy
        QVERIFY(
            w.enginePanel()->memory()->fieldText("memoryBlocks").contains(QStringLiteral("321")));
    }

    void chineseTranslationIsComplete() {
        QFile ts(qEnvironmentVariable("LLMWB_SOURCE_DIR") + "/translations/llmwb_zh_CN.ts");
        QVERIFY2(ts.open(QIODevice::ReadOnly), qPrintable(ts.fileName()));
        QXmlStreamReader xml(&ts);
        int messages = 0, translated = 0;
        QStringList missing;
        QString source;
        while (!xml.atEnd()) {
            xml.readNext();
            if (!xml.isStartElement())
                continue;
            if (xml.name() == QLatin1String("source")) {
                source = xml.readElementText();
            } else if (xml.name() == QLatin1String("translation")) {
                ++messages;
                const bool unfinished =
                    xml.attributes().value("type") == QLatin1String("unfinished");
                // Plural messages hold their forms in <numerusform> children.
                const QString text =
                    xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
                if (!unfinished && !text.isEmpty())
                    ++translated;
                else
                    missing << source;
            }
        }
        QVERIFY(!xml.hasError());
        QVERIFY(messages > 100);
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join(" | ")));
        QCOMPARE(translated, messages);
    }

    void chineseAppliesLive() {
        Database db(newDbPath());
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(dir_.filePath("lang.ini"));
        MainWindow w(controller, settings);
        const QString englishTitle = w.menuBar()->actions().first()->text();
        QCOMPARE(englishTitle, QStringLiteral("&File"));
        QTranslator zh;
        QVERIFY(zh.load(QStringLiteral(":/i18n/llmwb_zh_CN.qm")));
        QCoreApplication::installTranslator(&zh);
        QCoreApplication::processEvents();
        QCOMPARE(w.menuBar()->actions().first()->text(), QStringLiteral("文件(&F)"));
        QCOMPARE(w.dock("conversationsDock")->windowTitle(), QStringLiteral("对话"));
        QCOMPARE(w.chatView()->sendButton()->text(), QStringLiteral("发送"));
        QCOMPARE(w.chatView()->input()->placeholderText(),
                 QStringLiteral("输入消息，按 Enter 发送，按 Shift+Enter 换行。"));
        QCoreApplication::removeTranslator(&zh);
        QCoreApplication::processEvents();
        QCOMPARE(w.menuBar()->actions().first()->text(), QStringLiteral("&File"));
    }
};

QTEST_MAIN(TestUiMainWindow)
#include "tst_ui_main_window.moc"
