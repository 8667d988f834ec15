// The chat conventions of issue 12 and the workbench's layout and text, offscreen: renaming a
// conversation in place (F2, double-click), the chat after deleting a conversation, export
// file names, File > Open with a Hugging Face folder or its config.json, the status bar after a
// failed load and during a load test, "Copied" on Copy, undo of a deleted message (Ctrl+Z and
// the status bar's Undo, restored in the database), charts broken across idle gaps and the step
// timeline restarting with a new engine, elided labels with their whole text in the tooltip,
// the default layout (Engine and Tuning both visible) and Qt's own zh_CN translations.
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QClipboard>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLibraryInfo>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QToolButton>
#include <QVBoxLayout>
#include <QXYSeries>
#include <QtTest>

#include "app/gui/translation_loader.h"
#include "app/services/app_settings.h"
#include "app/services/chat_controller.h"
#include "app/services/conversation_store.h"
#include "app/services/database.h"
#include "ui/batch_timeline_view.h"
#include "ui/charts_panel.h"
#include "ui/chat_view.h"
#include "ui/conversation_list_model.h"
#include "ui/conversations_panel.h"
#include "ui/eliding_label.h"
#include "ui/engine_panel.h"
#include "ui/main_window.h"
#include "ui/markdown_body.h"
#include "ui/message_widget.h"
#include "ui/model_panel.h"

using namespace llmwb;

namespace {

ChatMessage makeMessage(qint64 conversationId, const QString& role, const QString& text) {
    ChatMessage m;
    m.conversationId = conversationId;
    m.role = role;
    m.content = text;
    return m;
}

// The line edit a rename opens inside the list, or null.
QLineEdit* titleEditor(QListView* list) {
    for (QLineEdit* e : list->viewport()->findChildren<QLineEdit*>())
        if (e->isVisible())
            return e;
    return nullptr;
}

QStringList messageTexts(ChatView* chat) {
    QStringList out;
    for (MessageWidget* w : chat->messageWidgets())
        out << w->message().content;
    return out;
}

} // namespace

class TestUiChatConventions : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    int counter_ = 0;
    QString newPath(const char* stem) {
        return dir_.filePath(QStringLiteral("%1%2").arg(QLatin1String(stem)).arg(++counter_));
    }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // F2 and a double-click edit the title in the list; Enter saves it in the store, Esc
    // keeps the old one; the context menu offers Rename.
    void renameInPlace() {
        Database db(newPath("rename.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        const auto a = controller.newConversation(QStringLiteral("first"));
        const auto b = controller.newConversation(QStringLiteral("second"));
        AppSettings settings(newPath("rename.ini"));
        MainWindow w(controller, settings);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QListView* list = w.conversationsPanel()->listView();
        w.openConversation(a->id);

        // F2 anywhere: the shown conversation's title is edited in place.
        QTest::keyClick(w.chatView()->input(), Qt::Key_F2);
        QLineEdit* editor = titleEditor(list);
        QVERIFY(editor);
        QCOMPARE(QApplication::focusWidget(), editor);
        QCOMPARE(editor->text(), QStringLiteral("first"));
        editor->selectAll();
        QTest::keyClicks(editor, QStringLiteral("  Renamed   title "));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_VERIFY(!titleEditor(list));
        QCOMPARE(store.conversation(a->id)->title, QStringLiteral("Renamed title"));
        const int row = w.conversationModel()->rowOf(a->id);
        QCOMPARE(w.conversationModel()->index(row).data().toString(),
                 QStringLiteral("Renamed title"));
        QCOMPARE(w.chatView()->conversationId(), a->id); // still the one shown

        // A double-click on the other one: it opens and its title is edited; Esc cancels.
        const QModelIndex bIndex =
            w.conversationModel()->index(w.conversationModel()->rowOf(b->id));
        const QPoint at = list->visualRect(bIndex).center();
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, at);
        QTest::mouseDClick(list->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(w.chatView()->conversationId(), b->id);
        editor = titleEditor(list);
        QVERIFY(editor);
        QCOMPARE(QApplication::focusWidget(), editor);
        QTest::keyClicks(editor, QStringLiteral("xyz"));
        QTest::keyClick(editor, Qt::Key_Escape);
        QTRY_VERIFY(!titleEditor(list));
        QCOMPARE(store.conversation(b->id)->title, QStringLiteral("second"));

        // An empty title is refused (the old one stays).
        QVERIFY(!w.conversationModel()->setData(bIndex, QStringLiteral("   ")));
        QVERIFY(!w.renameConversation(b->id, QString()));
        QCOMPARE(store.conversation(b->id)->title, QStringLiteral("second"));

        // The context menu has Rename, which edits in place.
        QTimer::singleShot(0, this, [] {
            auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
            QVERIFY(menu);
            QAction* rename = nullptr;
            for (QAction* act : menu->actions())
                if (act->text() == QStringLiteral("Rename"))
                    rename = act;
            QVERIFY(rename);
            rename->trigger();
            menu->close();
        });
        emit list->customContextMenuRequested(at);
        QTRY_VERIFY(titleEditor(list));
        QTest::keyClick(titleEditor(list), Qt::Key_Escape);
    }

    // After a delete the chat shows the conversation the list then selects, ready to type.
    void deleteShowsTheSelectedConversation() {
        Database db(newPath("delete.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        const auto a = controller.newConversation(QStringLiteral("a"));
        const auto b = controller.newConversation(QStringLiteral("b"));
        const auto c = controller.newConversation(QStringLiteral("c"));
        QVERIFY(
            store.addMessage(makeMessage(a->id, QStringLiteral("user"), QStringLiteral("in a"))));
        AppSettings settings(newPath("delete.ini"));
        MainWindow w(controller, settings);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        w.openConversation(b->id);
        QVERIFY(w.deleteConversation(b->id));
        const qint64 selected = w.conversationsPanel()->selectedConversation();
        QVERIFY(selected == a->id || selected == c->id);
        QCOMPARE(w.chatView()->conversationId(), selected);
        QCOMPARE(QApplication::focusWidget(), w.chatView()->input());
        // Deleting one that is not shown leaves the chat as it is.
        const qint64 other = selected == a->id ? c->id : a->id;
        QVERIFY(w.deleteConversation(other));
        QCOMPARE(w.chatView()->conversationId(), selected);
        // The last one: nothing is left to show.
        QVERIFY(w.deleteConversation(selected));
        QCOMPARE(w.chatView()->conversationId(), qint64(0));
    }

    void exportFileNamesHaveOneDot() {
        QCOMPARE(MainWindow::exportFileName(QStringLiteral("Explain this."), "md"),
                 QStringLiteral("Explain this.md"));
        QCOMPARE(MainWindow::exportFileName(QStringLiteral("Why?"), "json"),
                 QStringLiteral("Why_.json"));
        QCOMPARE(MainWindow::exportFileName(QStringLiteral("a/b: c..."), "md"),
                 QStringLiteral("a_b_ c.md"));
        QCOMPARE(MainWindow::exportFileName(QStringLiteral(" ... "), "md"),
                 QStringLiteral("conversation.md"));
        QCOMPARE(MainWindow::exportFileName(QString(), "json"),
                 QStringLiteral("conversation.json"));
        QCOMPARE(MainWindow::exportFileName(QStringLiteral("v1.2 notes"), "md"),
                 QStringLiteral("v1.2 notes.md"));
        for (const QString& t : {QStringLiteral("x."), QStringLiteral("."), QStringLiteral("a.. ")})
            QVERIFY(!MainWindow::exportFileName(t, "md").contains(QStringLiteral("..")));
    }

    // File > Open model takes a .gguf or a Hugging Face config.json (its folder is opened);
    // File > Open Hugging Face folder takes the folder; a dropped config.json opens its folder.
    void openAcceptsAHuggingFaceFolder() {
        QTemporaryDir hf;
        QVERIFY(hf.isValid());
        QFile config(hf.filePath(QStringLiteral("config.json")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write("{}");
        config.close();
        const QString folder = QFileInfo(hf.path()).absoluteFilePath();
        QCOMPARE(ModelPanel::modelPathForFile(config.fileName()), folder);
        QCOMPARE(ModelPanel::modelPathForFile(folder), folder);
        QCOMPARE(ModelPanel::modelPathForFile(QStringLiteral("/m/x.gguf")),
                 QStringLiteral("/m/x.gguf"));
        QVERIFY(ModelPanel::modelPathForFile(QString()).isEmpty());
        QVERIFY(ModelPanel::openDialogFilter().contains(QStringLiteral("*.gguf config.json")));
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(config.fileName())});
        QCOMPARE(ModelPanel::modelPathFromMime(&mime), folder);

        Database db(newPath("open.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(newPath("open.ini"));
        MainWindow w(controller, settings);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QSignalSpy opened(&w, &MainWindow::openModelRequested);
        QAction* open = w.action(QStringLiteral("openModelAction"));
        QAction* openFolder = w.action(QStringLiteral("openModelFolderAction"));
        QVERIFY(open && openFolder);
        QMenu* file = w.menuBar()->actions().first()->menu();
        QVERIFY(file->actions().contains(open));
        QVERIFY(file->actions().contains(openFolder));

        // The dialog (Qt's own, offscreen) is given config.json: the folder is opened.
        // Polls until the dialog is up (the static call's own event loop runs the timer), types
        // the path into its file name field and accepts (again, until the dialog has gone).
        QStringList firstFilter;
        auto choose = [&firstFilter](const QString& path) {
            auto* poll = new QTimer;
            poll->setInterval(50);
            QObject::connect(poll, &QTimer::timeout, [poll, path, &firstFilter] {
                auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
                if (!dialog) {
                    if (!firstFilter.isEmpty()) { // it was shown and has gone
                        poll->stop();
                        poll->deleteLater();
                    }
                    return;
                }
                firstFilter = dialog->nameFilters();
                if (auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
                    name->setText(path);
                QMetaObject::invokeMethod(dialog, "accept", Qt::QueuedConnection);
            });
            poll->start();
        };
        QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
        choose(config.fileName());
        open->trigger();
        QTRY_COMPARE(opened.size(), 1);
        QCOMPARE(opened.takeFirst().first().toString(), folder);
        QVERIFY(!firstFilter.isEmpty());
        QVERIFY(firstFilter.first().contains(QStringLiteral("config.json")));
        QVERIFY(firstFilter.first().contains(QStringLiteral("*.gguf")));
    }

    // After a failed load the previous model is named as the one in use; a long error is
    // elided (whole in the tooltip); a load test is not "idle".
    void statusBarTellsWhatIsLoaded() {
        Database db(newPath("status.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        AppSettings settings(newPath("status.ini"));
        MainWindow w(controller, settings);
        w.resize(1024, 640);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ModelMetadata m;
        m.name = QStringLiteral("Qwen2.5-0.5B");
        m.path = QStringLiteral("/models/qwen.gguf");
        w.onModelLoading(m.path);
        w.onModelLoaded(m);
        QCOMPARE(w.statusModelText(), QStringLiteral("Model: Qwen2.5-0.5B"));
        w.onModelLoading(QStringLiteral("/tmp/broken.gguf"));
        const QString error = QStringLiteral("not a GGUF file (bad magic) ") + QString(300, 'x');
        w.onModelLoadFailed(error);
        QVERIFY2(!w.statusModelText().contains(QStringLiteral("No model")),
                 qPrintable(w.statusModelText()));
        QVERIFY(w.statusModelText().contains(QStringLiteral("Qwen2.5-0.5B")));
        QVERIFY(w.statusModelText().contains(QStringLiteral("broken.gguf")));
        auto* label = w.findChild<ElidingLabel*>(QStringLiteral("statusModel"));
        QVERIFY(label);
        QVERIFY(label->toolTip().contains(error));
        QVERIFY(label->width() <= 420);
        // Without a previous model it says there is none.
        {
            MainWindow fresh(controller, settings);
            fresh.onModelLoading(QStringLiteral("/tmp/broken.gguf"));
            fresh.onModelLoadFailed(error);
            QVERIFY(fresh.statusModelText().startsWith(QStringLiteral("No model")));
            QVERIFY(!fresh.statusModelText().contains(QStringLiteral("xxxx")));
        }

        EngineView v;
        v.snapshot.num_running = 12;
        v.snapshot.num_waiting = 4;
        v.loadTestRequests = {1, 2, 3};
        w.onEngineView(v);
        QCOMPARE(w.statusStateText(), QStringLiteral("● load test"));
        v.loadTestRequests.clear();
        w.onEngineView(v);
        QCOMPARE(w.statusStateText(), QStringLiteral("● busy"));
        v.snapshot.num_running = v.snapshot.num_waiting = 0;
        w.onEngineView(v);
        QCOMPARE(w.statusStateText(), QStringLiteral("idle"));
    }

    void copySaysCopied() {
        ChatMessage m = makeMessage(1, QStringLiteral("assistant"), QStringLiteral("the answer"));
        m.id = 5;
        MessageWidget w(m);
        w.show();
        auto* copy = w.findChild<QToolButton*>(QStringLiteral("copyButton"));
        QVERIFY(copy);
        QCOMPARE(copy->text(), QStringLiteral("Copy"));
        QApplication::clipboard()->clear();
        QTest::mouseClick(copy, Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("the answer"));
        QCOMPARE(copy->text(), QStringLiteral("Copied"));
        QTRY_COMPARE_WITH_TIMEOUT(copy->text(), QStringLiteral("Copy"),
                                  MessageWidget::kCopiedMs + 2000);
    }

    // Deleting a message can be undone (Ctrl+Z in the message box, or the status bar's Undo):
    // it comes back in its place, in the view and in the database.
    void deletedMessageCanBeRestored() {
        const QString path = newPath("undo.sqlite");
        Database db(path);
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        const auto c = controller.newConversation(QStringLiteral("undo"));
        const auto q = store.addMessage(makeMessage(c->id, "user", QStringLiteral("question")));
        ChatMessage answer = makeMessage(c->id, "assistant", QStringLiteral("answer"));
        answer.tokensPerSecond = 12.5;
        answer.finishReason = FinishReason::Length;
        const auto a = store.addMessage(answer);
        const auto q2 = store.addMessage(makeMessage(c->id, "user", QStringLiteral("more")));
        QVERIFY(q && a && q2);
        AppSettings settings(newPath("undo.ini"));
        MainWindow w(controller, settings);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        w.openConversation(c->id);
        ChatView* chat = w.chatView();
        QAction* undo = w.action(QStringLiteral("undoDeleteAction"));
        QVERIFY(undo && !undo->isEnabled());
        auto* undoButton = w.findChild<QPushButton*>(QStringLiteral("undoDeleteButton"));
        QVERIFY(undoButton && !undoButton->isVisible());

        QTest::mouseClick(chat->messageWidget(a->id)->findChild<QToolButton*>("deleteButton"),
                          Qt::LeftButton);
        QTRY_COMPARE(chat->messageWidgets().size(), 2);
        QVERIFY(!store.message(a->id));
        QVERIFY(undo->isEnabled());
        QVERIFY(undoButton->isVisible());

        // Ctrl+Z with the keyboard in the (unedited) message box.
        chat->focusInput();
        QTest::keyClick(chat->input(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(messageTexts(chat), (QStringList{"question", "answer", "more"}));
        const auto back = store.message(a->id);
        QVERIFY(back);
        QCOMPARE(back->content, QStringLiteral("answer"));
        QCOMPARE(back->tokensPerSecond, std::optional<double>(12.5));
        QCOMPARE(back->finishReason, FinishReason::Length);
        QCOMPARE(back->created, a->created);
        QVERIFY(!undo->isEnabled());
        QVERIFY(!undoButton->isVisible());
        QCOMPARE(store.messages(c->id).size(), 3);

        // The status bar's button; while the box has typed text, Ctrl+Z undoes the typing.
        QTest::mouseClick(chat->messageWidget(q->id)->findChild<QToolButton*>("deleteButton"),
                          Qt::LeftButton);
        QTRY_COMPARE(chat->messageWidgets().size(), 2);
        QTest::keyClicks(chat->input(), QStringLiteral("typed"));
        QTest::keyClick(chat->input(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(chat->messageWidgets().size(), 2);
        QTest::mouseClick(undoButton, Qt::LeftButton);
        QCOMPARE(messageTexts(chat), (QStringList{"question", "answer", "more"}));
        QCOMPARE(store.messages(c->id).first().id, q->id);
        // Nothing more to undo.
        QVERIFY(!w.undoDelete());
    }

    // Regenerate keeps the earlier answers as versions ("‹ 2/3 ›"), stored in SQLite: they
    // can be flipped through and come back when the conversation is opened again.
    void regenerateKeepsEarlierAnswers() {
        const QString path = newPath("versions.sqlite");
        Database db(path);
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        QList<GenerationRequest> requests;
        connect(&controller, &ChatController::generateRequested, this,
                [&requests](const GenerationRequest& r) { requests << r; });
        auto answer = [&controller, &requests](const QString& text) {
            const GenerationRequest r = requests.last();
            controller.onToken(r.requestId, r.conversationId, text);
            GenerationStats st;
            st.requestId = r.requestId;
            st.conversationId = r.conversationId;
            st.completionTokens = 1;
            st.tokensPerSecond = 10.0 * requests.size();
            st.finishReason = FinishReason::Stop;
            controller.onFinished(st);
        };
        const auto c = controller.newConversation(QStringLiteral("versions"));
        ChatView view(controller);
        view.resize(700, 500);
        view.show();
        view.setConversation(c->id);
        view.input()->setPlainText(QStringLiteral("question"));
        view.send();
        answer(QStringLiteral("first"));
        view.regenerateLast();
        answer(QStringLiteral("second"));
        view.regenerateLast();
        answer(QStringLiteral("third"));
        QCOMPARE(requests.size(), 3);
        QCOMPARE(store.messages(c->id).size(), 2); // the versions are not messages
        const qint64 questionId = store.messages(c->id).first().id;
        const QList<ChatMessage> kept = store.answerVersions(questionId);
        QCOMPARE(kept.size(), 2);
        QCOMPARE(kept[0].content, QStringLiteral("first"));
        QCOMPARE(kept[1].content, QStringLiteral("second"));

        MessageWidget* last = view.messageWidgets().last();
        QCOMPARE(last->versionCount(), 3);
        QCOMPARE(last->shownVersion(), 3);
        auto* label = last->findChild<QLabel*>(QStringLiteral("versionLabel"));
        auto* prev = last->findChild<QToolButton*>(QStringLiteral("previousVersionButton"));
        auto* next = last->findChild<QToolButton*>(QStringLiteral("nextVersionButton"));
        QVERIFY(label && prev && next);
        QVERIFY(!label->isHidden());
        QVERIFY(view.messageWidgets().first()->findChild<QLabel*>("versionLabel")->isHidden());
        QCOMPARE(label->text(), QStringLiteral("3/3"));
        QVERIFY(!next->isEnabled());
        QTest::mouseClick(prev, Qt::LeftButton);
        QCOMPARE(label->text(), QStringLiteral("2/3"));
        QCOMPARE(last->shownMessage().content, QStringLiteral("second"));
        QVERIFY(last->body()->markdownText().contains(QStringLiteral("second")));
        QVERIFY(last->footerText().contains(QStringLiteral("20")));
        QTest::mouseClick(last->findChild<QToolButton*>("copyButton"), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("second"));
        QTest::mouseClick(prev, Qt::LeftButton);
        QCOMPARE(last->shownMessage().content, QStringLiteral("first"));
        QVERIFY(!prev->isEnabled());
        QTest::mouseClick(next, Qt::LeftButton);
        QTest::mouseClick(next, Qt::LeftButton);
        QCOMPARE(last->shownMessage().content, QStringLiteral("third"));

        // Opened again (and after a restart): the versions are still there.
        view.setConversation(0);
        view.setConversation(c->id);
        QCOMPARE(view.messageWidgets().last()->versionCount(), 3);
        Database again(path);
        QVERIFY(again.open());
        ConversationStore store2(again);
        QCOMPARE(store2.answerVersions(questionId).size(), 2);
        // A user message has no versions; deleting the conversation removes them.
        QCOMPARE(view.messageWidgets().first()->versionCount(), 1);
        QVERIFY(controller.deleteConversation(c->id));
        QCOMPARE(store.answerVersions(questionId).size(), 0);
    }

    // A line breaks where the engine was idle (no views for more than kGapSeconds).
    void chartsBreakLinesAcrossIdleGaps() {
        ChartsPanel p;
        p.resize(700, 500);
        p.show();
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        auto view = [&](double seconds, double tps) {
            EngineView v;
            v.timeMs = qint64(seconds * 1000);
            v.tokensPerSecond = tps;
            v.snapshot.num_running = 1;
            p.addView(v);
        };
        for (int i = 0; i <= 10; ++i)
            view(1.0 + 0.2 * i, 50);
        QCOMPARE(p.segmentCount(ChartsPanel::GenerationTps), 1);
        for (int i = 0; i <= 10; ++i) // 20 s idle, then busy again
            view(23.0 + 0.2 * i, 80);
        QCOMPARE(p.segmentCount(ChartsPanel::GenerationTps), 2);
        QCOMPARE(p.segmentCount(ChartsPanel::Running), 2);
        // The newest run is the main series: only the points after the gap.
        const QList<QPointF> newest = p.series(ChartsPanel::GenerationTps)->points();
        QCOMPARE(newest.size(), 11);
        for (const QPointF& pt : newest)
            QCOMPARE(pt.y(), 80.0);
        // No drawn line spans more than kGapSeconds.
        for (QAbstractSeries* s : p.chart(ChartsPanel::Throughput)->series()) {
            const QList<QPointF> pts = static_cast<QXYSeries*>(s)->points();
            for (qsizetype i = 1; i < pts.size(); ++i)
                QVERIFY(pts[i].x() - pts[i - 1].x() <= ChartsPanel::kGapSeconds);
        }
        // The legend names each quantity once: the older runs have no entry of their own.
        QChart* chart = p.chart(ChartsPanel::Throughput);
        QVERIFY(chart->series().size() > 2);
        for (QAbstractSeries* s : chart->series()) {
            if (s == p.series(ChartsPanel::GenerationTps) || s == p.series(ChartsPanel::PromptTps))
                continue;
            for (QLegendMarker* m : chart->legend()->markers(s))
                QVERIFY(!m->isVisible());
        }
        // When the first run leaves the window the extra series is emptied.
        for (int i = 0; i <= 20; ++i)
            view(25.0 + 3.0 * i, 10);
        QVERIFY(p.segmentCount(ChartsPanel::GenerationTps) >= 1);
        p.clear();
        QCOMPARE(p.segmentCount(ChartsPanel::GenerationTps), 0);
    }

    // A new engine (model loaded, pool rebuilt) numbers its steps from 0: the timeline of
    // tokens per step starts again instead of running on after the old engine's steps.
    void stepTimelineRestartsWithANewEngine() {
        EnginePanel panel;
        auto steps = [](int from, int count) {
            QVector<StepRecord> out;
            for (int i = from; i < from + count; ++i) {
                StepRecord r;
                r.step = i;
                r.decodeTokens = 3;
                out << r;
            }
            return out;
        };
        EngineView v;
        v.steps = steps(0, 40);
        panel.setView(v);
        v.steps = steps(40, 10);
        panel.setView(v);
        QCOMPARE(panel.timeline()->stepCount(), 50);
        v.steps = steps(0, 5); // the rebuilt engine
        panel.setView(v);
        QCOMPARE(panel.timeline()->stepCount(), 5);
        QCOMPARE(panel.timeline()->stepAtIndex(0).step, qint64(0));
    }

    // A label too narrow for its text shows it elided and the whole text on hover.
    void elidedLabelsShowTheirTextInTheTooltip() {
        ChatMessage m = makeMessage(1, QStringLiteral("assistant"), QStringLiteral("text"));
        m.id = 9;
        m.model = QStringLiteral("a-rather-long-model-name-Q8_0-instruct-2026.gguf");
        m.state = MessageState::Interrupted;
        MessageWidget w(m);
        w.resize(180, 120);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        ElidingLabel* role = w.roleLabel();
        QVERIFY(role->isElided());
        QVERIFY(role->effectiveToolTip().contains(m.model));
        ElidingLabel* state = w.stateLabel();
        QCOMPARE(state->text(), QStringLiteral("interrupted (the app was closed)"));
        // The state's whole text fits or is in the tooltip.
        QVERIFY(!state->isElided() || state->effectiveToolTip().contains(state->text()));
        { // in a layout, after the answer's final state came
            ChatMessage m2 = makeMessage(1, QStringLiteral("assistant"), QStringLiteral("t"));
            m2.id = 10;
            m2.model = QStringLiteral("LLM Workbench demo (random weights)");
            m2.finishReason = FinishReason::Length;
            QWidget holder;
            auto* lay = new QVBoxLayout(&holder);
            auto* w2 = new MessageWidget(m2);
            lay->addWidget(w2);
            holder.resize(590, 200);
            holder.show();
            QVERIFY(QTest::qWaitForWindowExposed(&holder));
            w2->setMessage(m2);
            QTRY_VERIFY(w2->roleLabel()->isElided());
            QVERIFY(!w2->stateLabel()->isElided());
        }
        { // in the chat, as the app shows it
            Database db2(newPath("header.sqlite"));
            QVERIFY(db2.open());
            ConversationStore store2(db2);
            ChatController controller2(store2);
            const auto conv = controller2.newConversation(QStringLiteral("h"));
            ChatMessage m3 =
                makeMessage(conv->id, QStringLiteral("assistant"), QStringLiteral("t"));
            m3.model = QStringLiteral("LLM Workbench demo (random weights)");
            m3.finishReason = FinishReason::Length;
            QVERIFY(store2.addMessage(m3));
            ChatView chat(controller2);
            chat.resize(600, 400);
            chat.show();
            chat.setConversation(conv->id);
            QVERIFY(QTest::qWaitForWindowExposed(&chat));
            MessageWidget* w3 = chat.messageWidgets().first();
            QTRY_VERIFY(w3->roleLabel()->isElided());
            QVERIFY(!w3->stateLabel()->isElided());
            QVERIFY(w3->stateLabel()->width() >= w3->stateLabel()->sizeHint().width());
        }
        // With some room the name gives way first: the state stays whole.
        w.resize(560, 120);
        QTRY_VERIFY(role->isElided());
        QVERIFY2(!state->isElided(), qPrintable(QString::number(state->width())));
        w.resize(1000, 120);
        QTRY_VERIFY(!role->isElided());
        QVERIFY(role->effectiveToolTip().isEmpty());

        // The chat's title, too.
        Database db(newPath("title.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        const QString title = QStringLiteral("A conversation with a title far too long to be "
                                             "shown whole in a narrow chat panel");
        const auto c = controller.newConversation(title);
        ChatView view(controller);
        view.resize(320, 400);
        view.show();
        view.setConversation(c->id);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.titleLabel()->isElided());
        QCOMPARE(view.titleLabel()->effectiveToolTip(), title);
    }

    // By default the Tuning controls and the Engine views are visible together (not tabbed),
    // at 1280x800 and at 1024x640.
    void defaultLayoutShowsEngineAndTuning() {
        Database db(newPath("layout.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        for (const QSize size : {QSize(1280, 800), QSize(1024, 640)}) {
            AppSettings settings(newPath("layout.ini"));
            MainWindow w(controller, settings);
            w.restoreLayout();
            w.resize(size);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            // Nothing asks for more than the window has (the docks and the chat would be cut
            // off on the right).
            QVERIFY2(w.minimumSizeHint().width() <= size.width(),
                     qPrintable(QString::number(w.minimumSizeHint().width())));
            QCOMPARE(w.width(), size.width());
            QDockWidget* engine = w.dock(QStringLiteral("engineDock"));
            QDockWidget* tuning = w.dock(QStringLiteral("tuningDock"));
            QVERIFY(w.tabifiedDockWidgets(engine).isEmpty());
            for (QDockWidget* d : {engine, tuning, w.dock(QStringLiteral("modelDock")),
                                   w.dock(QStringLiteral("conversationsDock"))}) {
                QVERIFY2(d->isVisible() && !d->visibleRegion().isEmpty(),
                         qPrintable(d->objectName()));
                QVERIFY2(d->height() >= 120, qPrintable(d->objectName()));
            }
            QVERIFY(!engine->geometry().intersects(tuning->geometry()));
            QVERIFY(w.chatView()->width() >= 300);
            // A layout saved now comes back as it is.
            w.saveLayout();
        }
    }

    // Qt's own strings (stock buttons, the file dialog) follow the language: qtbase_zh_CN.
    void qtOwnTranslationsAreLoaded() {
        const QString dir = QLibraryInfo::path(QLibraryInfo::TranslationsPath);
        if (!QFile::exists(dir + QStringLiteral("/qtbase_zh_CN.qm")))
            QSKIP("qtbase_zh_CN.qm is not installed (Debian: qt6-translations-l10n)");
        TranslationLoader loader(*qApp);
        loader.apply(QStringLiteral("zh_CN"));
        const QString cancel = QCoreApplication::translate("QPlatformTheme", "Cancel");
        QVERIFY2(cancel != QStringLiteral("Cancel"), qPrintable(cancel));
        QVERIFY(QCoreApplication::translate("QFileDialog", "Look in:") !=
                QStringLiteral("Look in:"));
        loader.apply(QStringLiteral("en"));
        QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Cancel"), QStringLiteral("Cancel"));
    }

    // A language the app has no translation for (and the C locale) gets English with its plural
    // forms from llmwb_en.qm, not the source text's "(s)".
    void untranslatedLanguagesGetEnglishPlurals() {
        TranslationLoader loader(*qApp);
        for (const char* code : {"fr_FR", "C", "en"}) {
            loader.apply(QString::fromLatin1(code));
            const QString one = QCoreApplication::translate(
                "llmwb::StorageBanner",
                "%n answer(s) not saved in the chat database yet; the text is kept here and "
                "saving is retried. %1",
                nullptr, 1);
            const QString two = QCoreApplication::translate(
                "llmwb::StorageBanner",
                "%n answer(s) not saved in the chat database yet; the text is kept here and "
                "saving is retried. %1",
                nullptr, 2);
            QVERIFY2(one.startsWith(QStringLiteral("1 answer is not saved")), qPrintable(one));
            QVERIFY2(two.startsWith(QStringLiteral("2 answers are not saved")), qPrintable(two));
        }
        loader.apply(QStringLiteral("en"));
    }
};

QTEST_MAIN(TestUiChatConventions)
#include "tst_ui_chat_conventions.moc"
