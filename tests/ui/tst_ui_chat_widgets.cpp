// The chat widgets offscreen, against a scripted engine: the Copy button of each Markdown code
// block (the clipboard gets exactly the code), the message actions (copy, delete, edit and
// resend, regenerate, stop) with what they leave in SQLite after the database is reopened, the
// figures of answers shown again after reopening, and the Model panel (recent models with
// missing files, removal, drops, load progress with Cancel, a clear load error), and the keys
// and keyboard focus of the message box (Enter sends, Shift+Enter is a new line).
#include <QAbstractItemModelTester>
#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
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
#include <QSpinBox>
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
#include "ui/conversation_settings_dialog.h"
#include "ui/markdown_body.h"
#include "ui/markdown_view.h"
#include "ui/message_widget.h"
#include "ui/model_panel.h"

using namespace llmwb;
using llmwb::test::ScriptedEngine;

namespace {

QToolButton* button(QWidget* w, const char* name) {
    return w->findChild<QToolButton*>(QLatin1String(name));
}

} // namespace

class TestUiChatWidgets : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    int counter_ = 0;
    QString newPath(const char* stem) {
        return dir_.filePath(QStringLiteral("%1%2").arg(QLatin1String(stem)).arg(++counter_));
    }

  private slots:
    // The chat's Thinking and Thinking budget settings: shown as set, read back as chosen.
    void conversationSettingsCarryThinking() {
        ConversationSettingsDialog d;
        SamplingSettings s;
        d.setValues(QStringLiteral("t"), QString(), s);
        auto* thinking = d.findChild<QComboBox*>(QStringLiteral("thinking"));
        auto* budget = d.findChild<QSpinBox*>(QStringLiteral("thinkingBudget"));
        QVERIFY(thinking && budget);
        QCOMPARE(thinking->currentData().toInt(), -1);
        QCOMPARE(budget->text(), QStringLiteral("no cap"));
        QCOMPARE(d.sampling().enableThinking, -1);
        QCOMPARE(d.sampling().thinkingBudget, -1);
        s.enableThinking = 0;
        s.thinkingBudget = 256;
        d.setValues(QStringLiteral("t"), QString(), s);
        QCOMPARE(thinking->currentText(), QStringLiteral("Off"));
        thinking->setCurrentIndex(thinking->findData(1));
        budget->setValue(1024);
        QCOMPARE(d.sampling().enableThinking, 1);
        QCOMPARE(d.sampling().thinkingBudget, 1024);
    }

    void initTestCase() { QVERIFY(dir_.isValid()); }

    void codeBlockCopyButtonsCopyExactlyTheCode() {
        MarkdownView view;
        view.resize(500, 100);
        view.show();
        const QString first = QStringLiteral("int main() {\n    return 0;  // *not* markdown\n}");
        const QString second = QStringLiteral("$ echo \"a  b\"\n\nsecond paragraph of code");
        view.setMarkdownText(QStringLiteral("Intro **bold**\n\n```cpp\n%1\n```\n\nBetween.\n\n"
                                            "~~~\n%2\n~~~\n\nEnd `inline` text.")
                                 .arg(first, second));
        QCOMPARE(view.codeBlockCount(), 2);
        QCOMPARE(view.codeBlockText(0), first);
        QCOMPARE(view.codeBlockText(1), second);
        for (int i = 0; i < 2; ++i) {
            QToolButton* b = view.codeCopyButton(i);
            QVERIFY(b);
            QVERIFY(b->isVisible());
            QVERIFY(!b->text().isEmpty());
            // Inside the view, in the space above its code block: it covers no line of code.
            QVERIFY(view.viewport()->rect().contains(b->geometry()));
            for (QTextBlock t = view.document()->begin(); t.isValid(); t = t.next()) {
                if (!t.blockFormat().hasProperty(QTextFormat::BlockCodeFence))
                    continue;
                const QRectF line = view.document()->documentLayout()->blockBoundingRect(t);
                QVERIFY2(
                    !line.intersects(QRectF(b->geometry())),
                    qPrintable(QStringLiteral("button %1 covers \"%2\"").arg(i).arg(t.text())));
            }
        }
        QVERIFY(view.codeCopyButton(0)->y() < view.codeCopyButton(1)->y());

        QApplication::clipboard()->setText(QStringLiteral("before"));
        QTest::mouseClick(view.codeCopyButton(1), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), second);
        QTest::mouseClick(view.codeCopyButton(0), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), first);

        // Adjacent code blocks in different languages are two blocks.
        view.setMarkdownText(QStringLiteral("```bash\nls -l\n```\n```python\nprint(1)\n```"));
        QCOMPARE(view.codeBlockCount(), 2);
        QCOMPARE(view.codeBlockText(0), QStringLiteral("ls -l"));
        QCOMPARE(view.codeBlockText(1), QStringLiteral("print(1)"));

        // Re-rendering with fewer blocks drops the extra button; none without code.
        view.setMarkdownText(QStringLiteral("```\nonly\n```"));
        QCOMPARE(view.codeBlockCount(), 1);
        QCOMPARE(view.findChildren<QToolButton*>(QStringLiteral("codeCopyButton")).size(), 1);
        QCOMPARE(view.codeBlockText(0), QStringLiteral("only"));
        view.setMarkdownText(QStringLiteral("no code at all"));
        QCOMPARE(view.codeBlockCount(), 0);
        QCOMPARE(view.findChildren<QToolButton*>(QStringLiteral("codeCopyButton")).size(), 0);

        // Streaming updates (coalesced by the MarkdownBody holding the views): the first after
        // a quiet spell shows at once, the last of a burst shows soon after.
        MarkdownBody body;
        body.resize(500, 100);
        body.show();
        QTest::qWait(50);
        body.setMarkdownTextLater(QStringLiteral("Streaming **now**"));
        QCOMPARE(body.segment(0)->document()->toPlainText(), QStringLiteral("Streaming now"));
        for (int i = 0; i < 50; ++i)
            body.setMarkdownTextLater(QStringLiteral("word ").repeated(i + 1).trimmed());
        QTRY_COMPARE(body.segment(0)->document()->toPlainText(),
                     QStringLiteral("word ").repeated(50).trimmed());

        // While streaming, an unclosed fence is already a code block with its button.
        view.setMarkdownText(QStringLiteral("Answer:\n\n```python\nprint(1)\nprint(2"));
        QCOMPARE(view.codeBlockCount(), 1);
        QCOMPARE(view.codeBlockText(0), QStringLiteral("print(1)\nprint(2"));
    }

    void markdownSegments() {
        // Cuts only after blank lines outside fences, once long enough; text round-trips.
        QString md;
        for (int i = 0; i < 40; ++i)
            md += QStringLiteral("Paragraph %1 with some words in it.\n\n").arg(i);
        md += QStringLiteral("```\ncode\n\nstill code after a blank line\n```\n\n");
        md += QStringLiteral("    indented code\n\n    more indented code\n\nEnd.");
        const QStringList parts = splitMarkdownSegments(md, 200);
        QVERIFY(parts.size() > 3);
        QCOMPARE(parts.join(QString()), md);
        for (const QString& p : parts) {
            QVERIFY(!p.startsWith(QStringLiteral("still code")));
            QVERIFY(!p.startsWith(QStringLiteral("    more indented")));
        }
        for (int i = 0; i + 1 < parts.size(); ++i)
            QVERIFY(parts[i].size() >= 200);
        QCOMPARE(splitMarkdownSegments(md, 1'000'000), QStringList{md});
        QCOMPARE(splitMarkdownSegments(QString(), 10), QStringList{QString()});
        // Appending never moves an earlier cut.
        for (int cut = 1; cut < md.size(); cut += 37) {
            const QStringList prefix = splitMarkdownSegments(md.left(cut), 200);
            for (int i = 0; i + 1 < prefix.size(); ++i)
                QCOMPARE(prefix[i], parts.value(i));
        }
    }

    void longStreamingAnswerRendersOnlyItsTail() {
        MarkdownBody body;
        body.resize(600, 100);
        body.show();
        QString text;
        int maxRendered = 0;
        for (int i = 0; i < 400; ++i) {
            text += QStringLiteral("Sentence number %1 of a long answer. ").arg(i);
            if (i % 8 == 7)
                text += QStringLiteral("\n\n");
            if (i == 200)
                text += QStringLiteral("\n\n```python\nprint('hi')\n```\n\n");
            body.setMarkdownText(text);
            maxRendered = std::max(maxRendered, body.lastRenderedSegments());
        }
        QVERIFY2(body.segmentCount() >= 5, qPrintable(QString::number(body.segmentCount())));
        QVERIFY2(maxRendered <= 2, qPrintable(QString::number(maxRendered)));
        QCOMPARE(body.markdownText(), text);
        QCOMPARE(body.codeBlockCount(), 1);
        QCOMPARE(body.codeBlockText(0), QStringLiteral("print('hi')"));
        QVERIFY(body.codeCopyButton(0));
        QApplication::clipboard()->clear();
        QTest::mouseClick(body.codeCopyButton(0), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("print('hi')"));
        QString shown;
        for (int i = 0; i < body.segmentCount(); ++i)
            shown += body.segment(i)->markdownText();
        QCOMPARE(shown, text);
        // A shorter text (regenerated answer) drops the extra segments.
        body.setMarkdownText(QStringLiteral("short"));
        QCOMPARE(body.segmentCount(), 1);
        QCOMPARE(body.codeBlockCount(), 0);
    }

    // Shrinking the chat re-wraps the messages to the narrower viewport: no message (nor its
    // Delete button) reaches past the viewport's right edge, even with a long model name in
    // the header, and the answer grows taller.
    void messagesShrinkWithTheView() {
        Database db(newPath("shrink.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        controller.setModelName(QStringLiteral("LLM Workbench demo (n-gram, not a trained model)"));
        ScriptedEngine engine(controller);
        ChatView view(controller);
        view.resize(1300, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto conv = controller.newConversation();
        QVERIFY(conv);
        view.setConversation(conv->id);
        view.input()->setPlainText(QStringLiteral("Explain paged attention in two sentences."));
        QTest::mouseClick(view.sendButton(), Qt::LeftButton);
        QCOMPARE(engine.requests_.size(), 1);
        QStringList tokens;
        for (int i = 0; i < 80; ++i) {
            tokens << QStringLiteral("Sentence %1 about paged attention and its blocks. ").arg(i);
            if (i % 12 == 11)
                tokens << QStringLiteral("\n\n");
            if (i == 40)
                tokens << QStringLiteral("\n\n```cpp\nint main() {\n    return 0;\n}\n```\n\n");
        }
        engine.answer(engine.requests_[0], tokens);
        auto* scroll = view.findChild<QScrollArea*>();
        QVERIFY(scroll);
        QWidget* viewport = scroll->viewport();
        auto settle = [] {
            for (int i = 0; i < 5; ++i) {
                QCoreApplication::sendPostedEvents();
                QCoreApplication::processEvents();
            }
        };
        auto checkInside = [&](const char* when) {
            const QList<MessageWidget*> list = view.messageWidgets();
            QCOMPARE(list.size(), 2);
            for (MessageWidget* w : list) {
                const int right = w->mapTo(viewport, QPoint(w->width(), 0)).x();
                QVERIFY2(right <= viewport->width(),
                         qPrintable(QStringLiteral("%1: message right edge %2 > viewport %3")
                                        .arg(QLatin1String(when))
                                        .arg(right)
                                        .arg(viewport->width())));
                QToolButton* del = button(w, "deleteButton");
                QVERIFY(del);
                QVERIFY(del->mapTo(viewport, QPoint(del->width(), 0)).x() <= viewport->width());
                for (int i = 0; i < w->body()->segmentCount(); ++i) {
                    MarkdownView* seg = w->body()->segment(i);
                    QVERIFY(seg->mapTo(viewport, QPoint(seg->width(), 0)).x() <= viewport->width());
                }
            }
        };
        settle();
        MessageWidget* answer = view.messageWidgets().last();
        QVERIFY(answer->body()->segmentCount() >= 2);
        QCOMPARE(answer->body()->codeBlockCount(), 1);
        checkInside("wide");
        const int wideHeight = answer->body()->height();
        const int wideWidth = answer->width();

        view.resize(520, 700);
        settle();
        checkInside("narrow");
        QVERIFY(answer->width() < wideWidth);
        QVERIFY2(
            answer->body()->height() > wideHeight,
            qPrintable(QStringLiteral("%1 -> %2").arg(wideHeight).arg(answer->body()->height())));
    }

    void messageActionsPersist() {
        const QString dbPath = newPath("chat.sqlite");
        qint64 convId = 0;
        {
            Database db(dbPath);
            QVERIFY(db.open());
            ConversationStore store(db);
            ChatController controller(store);
            controller.setModelName(QStringLiteral("tiny"));
            ScriptedEngine engine(controller);
            ChatView view(controller);
            view.resize(700, 600);
            view.show();
            const auto conv = controller.newConversation();
            QVERIFY(conv);
            convId = conv->id;
            view.setConversation(convId);

            // Send, then stop: the Stop button asks the engine to stop this request.
            view.input()->setPlainText(QStringLiteral("First question"));
            QTest::mouseClick(view.sendButton(), Qt::LeftButton);
            QCOMPARE(engine.requests_.size(), 1);
            QVERIFY(view.stopButton()->isEnabled());
            QTest::mouseClick(view.stopButton(), Qt::LeftButton);
            QCOMPARE(engine.stopped_, QList<quint64>{engine.requests_[0].requestId});
            engine.answer(engine.requests_[0], {"Partial"}, true);
            auto widgets = view.messageWidgets();
            QCOMPARE(widgets.size(), 2);
            QCOMPARE(widgets[1]->message().state, MessageState::Stopped);

            // Regenerate (button of the last answer) replaces the answer.
            QToolButton* regen = button(widgets[1], "regenerateButton");
            QVERIFY(regen && regen->isEnabled());
            QTest::mouseClick(regen, Qt::LeftButton);
            QCOMPARE(engine.requests_.size(), 2);
            engine.answer(engine.requests_[1], {"Answer ", "one\n\n```\nx = 1\n```"});
            widgets = view.messageWidgets();
            QCOMPARE(widgets.size(), 2);
            QCOMPARE(widgets[1]->message().state, MessageState::Complete);

            // Copy (message): the Markdown text of the message.
            QTest::mouseClick(button(widgets[1], "copyButton"), Qt::LeftButton);
            QCOMPARE(QApplication::clipboard()->text(),
                     QStringLiteral("Answer one\n\n```\nx = 1\n```"));
            QTest::mouseClick(widgets[1]->body()->codeCopyButton(0), Qt::LeftButton);
            QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("x = 1"));

            // A second exchange, then edit the first question: everything after it goes.
            view.input()->setPlainText(QStringLiteral("Second question"));
            QTest::mouseClick(view.sendButton(), Qt::LeftButton);
            engine.answer(engine.requests_[2], {"Answer two"}, false, 12.0);
            QCOMPARE(view.messageWidgets().size(), 4);
            widgets = view.messageWidgets();
            QToolButton* edit = button(widgets[0], "editButton");
            QVERIFY(edit && edit->isEnabled());
            QTRY_VERIFY(edit->isVisible()); // new message widgets are shown by the layout
            QTest::mouseClick(edit, Qt::LeftButton);
            auto* editor = widgets[0]->findChild<QPlainTextEdit*>(QStringLiteral("messageEditor"));
            QVERIFY(editor && editor->isVisible());
            QCOMPARE(editor->toPlainText(), QStringLiteral("First question"));
            editor->setPlainText(QStringLiteral("First question, edited"));
            QTest::mouseClick(widgets[0]->findChild<QPushButton*>(QStringLiteral("resendButton")),
                              Qt::LeftButton);
            QCOMPARE(engine.requests_.size(), 4);
            QCOMPARE(engine.requests_[3].messages.size(), 1); // only the edited question
            QCOMPARE(engine.requests_[3].messages[0].content,
                     QStringLiteral("First question, edited"));
            engine.answer(engine.requests_[3], {"Edited ", "answer"}, false, 77.25);
            QTRY_COMPARE(view.messageWidgets().size(), 2);

            // A third exchange whose answer is then deleted with its button.
            view.input()->setPlainText(QStringLiteral("Third"));
            QTest::mouseClick(view.sendButton(), Qt::LeftButton);
            engine.answer(engine.requests_[4], {"To be deleted"});
            QCOMPARE(view.messageWidgets().size(), 4);
            QTest::mouseClick(button(view.messageWidgets().last(), "deleteButton"), Qt::LeftButton);
            QTRY_COMPARE(view.messageWidgets().size(), 3);
        }
        // Reopen the database in a new view: the same messages, states and figures.
        Database db(dbPath);
        QVERIFY(db.open());
        ConversationStore store(db);
        const auto msgs = store.messages(convId);
        QCOMPARE(msgs.size(), 3);
        QCOMPARE(msgs[0].content, QStringLiteral("First question, edited"));
        QCOMPARE(msgs[1].content, QStringLiteral("Edited answer"));
        QCOMPARE(msgs[1].state, MessageState::Complete);
        QCOMPARE(msgs[1].model, QStringLiteral("tiny"));
        QCOMPARE(msgs[1].tokensPerSecond.value_or(0), 77.25);
        QCOMPARE(msgs[1].ttftMs.value_or(0), 31.0);
        QCOMPARE(msgs[1].promptTokens.value_or(0), qint64(9));
        QCOMPARE(msgs[1].completionTokens.value_or(0), qint64(2));
        QCOMPARE(msgs[2].content, QStringLiteral("Third"));

        ChatController controller(store);
        ChatView view(controller);
        view.resize(700, 600);
        view.show();
        view.setConversation(convId);
        const auto widgets = view.messageWidgets();
        QCOMPARE(widgets.size(), 3);
        const QString footer = widgets[1]->footerText();
        QVERIFY2(footer.contains(QLocale().toString(77.25, 'f', 1)), qPrintable(footer));
        QVERIFY2(footer.contains(QStringLiteral("31")), qPrintable(footer));
        QVERIFY2(footer.contains(QStringLiteral("9")) && footer.contains(QStringLiteral("2")),
                 qPrintable(footer));
        QTRY_VERIFY(widgets[1]->findChild<QLabel*>(QStringLiteral("messageFooter"))->isVisible());
        QVERIFY(widgets[0]->findChild<QLabel*>(QStringLiteral("messageFooter"))->isHidden());
    }

    // An answer from an endpoint without usage: its figures say the count is counted chunks.
    void countedChunksAreNamedInTheFigures() {
        ChatMessage m;
        m.role = QStringLiteral("assistant");
        m.completionTokens = 5;
        m.tokensPerSecond = 12.0;
        QString f = MessageWidget::figuresText(m);
        QVERIFY2(f.contains(QStringLiteral("0 prompt + 5 generated tokens")), qPrintable(f));
        m.completionTokensCounted = true;
        f = MessageWidget::figuresText(m);
        QVERIFY2(f.contains(QStringLiteral("5 generated tokens (counted streamed chunks: the "
                                           "endpoint sent no usage)")),
                 qPrintable(f));
        QVERIFY(!f.contains(QStringLiteral("prompt")));
    }

    void editorKeys() {
        ChatMessage m;
        m.id = 7;
        m.role = QStringLiteral("user");
        m.content = QStringLiteral("Original");
        MessageWidget w(m);
        w.show();
        QSignalSpy resend(&w, &MessageWidget::resendRequested);
        QToolButton* edit = button(&w, "editButton");
        QVERIFY(edit);
        QTest::mouseClick(edit, Qt::LeftButton);
        QVERIFY(w.isEditing());
        auto* editor = w.findChild<QPlainTextEdit*>(QStringLiteral("messageEditor"));
        QVERIFY(editor);
        editor->setPlainText(QStringLiteral("Changed"));
        QTest::keyClick(editor, Qt::Key_Escape); // cancels
        QVERIFY(!w.isEditing());
        QCOMPARE(resend.size(), 0);
        QCOMPARE(w.message().content, QStringLiteral("Original"));
        QTest::mouseClick(edit, Qt::LeftButton);
        QCOMPARE(editor->toPlainText(), QStringLiteral("Original")); // fresh copy
        editor->setPlainText(QStringLiteral("   "));
        QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier); // empty: nothing
        QCOMPARE(resend.size(), 0);
        QVERIFY(w.isEditing());
        editor->setPlainText(QStringLiteral("Changed"));
        QTest::keyClick(editor, Qt::Key_Return, Qt::ControlModifier);
        QCOMPARE(resend.size(), 1);
        QCOMPARE(resend.first().at(0).toLongLong(), qint64(7));
        QCOMPARE(resend.first().at(1).toString(), QStringLiteral("Changed"));
        QVERIFY(!w.isEditing());
    }

    // The message box follows the chat convention: Enter sends, Shift+Enter starts a new line,
    // Ctrl+Enter also sends; empty messages, a running answer and input-method composition
    // keep Enter from sending.
    void messageBoxKeys() {
        Database db(newPath("keys.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        const auto c = controller.newConversation();
        QVERIFY(c);
        ChatView view(controller);
        view.setConversation(c->id);
        view.resize(700, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QPlainTextEdit* input = view.input();
        QVERIFY(input->placeholderText().contains(QStringLiteral("Enter sends")));
        QVERIFY(input->placeholderText().contains(QStringLiteral("Shift+Enter")));

        // Empty and whitespace-only: nothing is sent, nothing is stored.
        QTest::keyClick(input, Qt::Key_Return);
        QTest::keyClicks(input, QStringLiteral("   "));
        QTest::keyClick(input, Qt::Key_Return);
        QTest::keyClick(input, Qt::Key_Return, Qt::ControlModifier);
        QCOMPARE(engine.requests_.size(), 0);
        QVERIFY(store.messages(c->id).isEmpty());
        QCOMPARE(input->toPlainText(), QStringLiteral("   ")); // no newline added either
        input->clear();

        // Shift+Enter: a new line, not sent.
        QTest::keyClicks(input, QStringLiteral("first line"));
        QTest::keyClick(input, Qt::Key_Return, Qt::ShiftModifier);
        QTest::keyClicks(input, QStringLiteral("second line"));
        QCOMPARE(engine.requests_.size(), 0);
        QCOMPARE(input->toPlainText(), QStringLiteral("first line\nsecond line"));

        // Enter sends the whole message, newline included, and empties the box.
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_.size(), 1);
        QCOMPARE(engine.requests_[0].messages.last().content,
                 QStringLiteral("first line\nsecond line"));
        QCOMPARE(store.messages(c->id).first().content, QStringLiteral("first line\nsecond line"));
        QVERIFY(input->toPlainText().isEmpty());
        // The question is shown with its line break (not joined into one Markdown paragraph),
        // and Copy gives the text as typed.
        MessageWidget* question = view.messageWidgets().first();
        QCOMPARE(question->body()->segment(0)->toPlainText(),
                 QStringLiteral("first line\nsecond line"));
        QTest::mouseClick(button(question, "copyButton"), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("first line\nsecond line"));

        // While the answer generates, Enter neither sends nor adds a line: the text waits.
        QTest::keyClicks(input, QStringLiteral("next"));
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_.size(), 1);
        QCOMPARE(input->toPlainText(), QStringLiteral("next"));
        engine.answer(engine.requests_[0], {"ok"});

        // Enter on the keypad sends too.
        QTest::keyClick(input, Qt::Key_Enter, Qt::KeypadModifier);
        QCOMPARE(engine.requests_.size(), 2);
        QCOMPARE(engine.requests_[1].messages.last().content, QStringLiteral("next"));
        engine.answer(engine.requests_[1], {"ok"});

        // Ctrl+Enter still sends.
        QTest::keyClicks(input, QStringLiteral("third"));
        QTest::keyClick(input, Qt::Key_Return, Qt::ControlModifier);
        QCOMPARE(engine.requests_.size(), 3);
        QCOMPARE(engine.requests_[2].messages.last().content, QStringLiteral("third"));
        QVERIFY(input->toPlainText().isEmpty());
        engine.answer(engine.requests_[2], {"ok"});

        // An input method composing (preedit text shown): Enter is not a send.
        QInputMethodEvent preedit(QStringLiteral("nihao"), {});
        QApplication::sendEvent(input, &preedit);
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_.size(), 3);
        // The input method commits; now Enter sends the committed text.
        QInputMethodEvent commit;
        commit.setCommitString(QStringLiteral("你好"));
        QApplication::sendEvent(input, &commit);
        QVERIFY(input->toPlainText().contains(QStringLiteral("你好")));
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_.size(), 4);
        QCOMPARE(engine.requests_[3].messages.last().content, QStringLiteral("你好"));
    }

    // Clicking Send keeps the keyboard in the message box; when the answer has finished the
    // box has the focus again, unless the user went to another text field meanwhile.
    void focusStaysInTheMessageBox() {
        Database db(newPath("focus.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        const auto c = controller.newConversation();
        QWidget window;
        auto* view = new ChatView(controller, &window);
        auto* other = new QLineEdit(&window); // stands for the search field
        auto* layout = new QVBoxLayout(&window);
        layout->addWidget(other);
        layout->addWidget(view);
        view->setConversation(c->id);
        window.resize(700, 500);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QPlainTextEdit* input = view->input();
        view->focusInput();
        QCOMPARE(QApplication::focusWidget(), input);

        // Send by mouse: the focus does not move to the button.
        QTest::keyClicks(input, QStringLiteral("one"));
        QTest::mouseClick(view->sendButton(), Qt::LeftButton);
        QCOMPARE(engine.requests_.size(), 1);
        QCOMPARE(QApplication::focusWidget(), input);
        engine.answer(engine.requests_[0], {"ok"});
        QCOMPARE(QApplication::focusWidget(), input);

        // Tabbed to Stop during the answer: back in the box when it has finished.
        QTest::keyClicks(input, QStringLiteral("two"));
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_.size(), 2);
        view->stopButton()->setFocus(Qt::TabFocusReason);
        QCOMPARE(QApplication::focusWidget(), view->stopButton());
        QTest::keyClick(view->stopButton(), Qt::Key_Space); // presses Stop
        QCOMPARE(engine.stopped_.size(), 1);
        engine.answer(engine.requests_[1], {"partial"}, true);
        QCOMPARE(QApplication::focusWidget(), input);

        // Typing elsewhere when the answer finishes: the focus stays there.
        QTest::keyClicks(input, QStringLiteral("three"));
        QTest::keyClick(input, Qt::Key_Return);
        QCOMPARE(engine.requests_.size(), 3);
        other->setFocus(Qt::MouseFocusReason);
        QTest::keyClicks(other, QStringLiteral("cach"));
        engine.answer(engine.requests_[2], {"ok"});
        QCOMPARE(QApplication::focusWidget(), other);
        QCOMPARE(other->text(), QStringLiteral("cach"));
    }

    void modelPanelRecentModelsAndDrops() {
        ModelPanel panel;
        panel.show();
        const QString present = newPath("present") + QStringLiteral(".gguf");
        QFile f(present);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        const QString missing = dir_.filePath(QStringLiteral("gone.gguf"));
        panel.setRecentModels({present, missing});
        auto* list = panel.findChild<QListWidget*>(QStringLiteral("recentModels"));
        QVERIFY(list);
        QCOMPARE(list->count(), 2);
        QVERIFY(!list->item(0)->text().contains(QStringLiteral("gone")));
        QVERIFY(list->item(1)->text().contains(QStringLiteral("gone.gguf")));
        QVERIFY(list->item(1)->text() != QStringLiteral("gone.gguf")); // marked as missing
        QVERIFY(list->item(1)->font().italic());

        QSignalSpy open(&panel, &ModelPanel::openRequested);
        emit list->itemActivated(list->item(1)); // a missing file is not opened
        QCOMPARE(open.size(), 0);
        QVERIFY(panel.fieldText("modelStatus").contains(QDir::toNativeSeparators(missing)));
        emit list->itemActivated(list->item(0));
        QCOMPARE(open.size(), 1);
        QCOMPARE(open.takeFirst().first().toString(), present);

        QSignalSpy removed(&panel, &ModelPanel::removeRecentRequested);
        auto* remove = panel.findChild<QPushButton*>(QStringLiteral("removeRecent"));
        QVERIFY(remove && !remove->isEnabled());
        list->setCurrentRow(1);
        QVERIFY(remove->isEnabled());
        QTest::mouseClick(remove, Qt::LeftButton);
        QCOMPARE(removed.size(), 1);
        QCOMPARE(removed.first().first().toString(), missing);
        QCOMPARE(panel.recentModels(), QStringList{present});

        // Drops: one .gguf file or a folder; not a text file, not two files.
        QMimeData gguf;
        gguf.setUrls({QUrl::fromLocalFile(present)});
        QCOMPARE(ModelPanel::modelPathFromMime(&gguf), QFileInfo(present).absoluteFilePath());
        QMimeData folder;
        folder.setUrls({QUrl::fromLocalFile(dir_.path())});
        QCOMPARE(ModelPanel::modelPathFromMime(&folder), QFileInfo(dir_.path()).absoluteFilePath());
        QMimeData text;
        text.setUrls({QUrl::fromLocalFile(dir_.filePath("notes.txt"))});
        QVERIFY(ModelPanel::modelPathFromMime(&text).isEmpty());
        QMimeData two;
        two.setUrls({QUrl::fromLocalFile(present), QUrl::fromLocalFile(present)});
        QVERIFY(ModelPanel::modelPathFromMime(&two).isEmpty());
        QDragEnterEvent enter(QPoint(5, 5), Qt::CopyAction, &gguf, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&panel, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(5, 5), Qt::CopyAction, &gguf, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&panel, &drop);
        QCOMPARE(open.size(), 1);
        QCOMPARE(open.first().first().toString(), QFileInfo(present).absoluteFilePath());
    }

    void modelPanelLoadingProgressCancelAndError() {
        ModelPanel panel;
        panel.show();
        auto* cancel = panel.findChild<QPushButton*>(QStringLiteral("cancelLoad"));
        auto* progress = panel.findChild<QProgressBar*>(QStringLiteral("loadProgress"));
        QVERIFY(cancel && progress);
        QVERIFY(!cancel->isVisible());
        QVERIFY(!panel.isLoading());

        panel.setLoading(QStringLiteral("/models/big.gguf"));
        QVERIFY(panel.isLoading());
        QVERIFY(cancel->isVisible() && cancel->isEnabled());
        QVERIFY(progress->isVisible());
        panel.setLoadProgress(40, QStringLiteral("Reading weights"));
        QCOMPARE(progress->maximum(), 100);
        QCOMPARE(progress->value(), 40);
        QVERIFY(panel.fieldText("modelStatus").contains(QStringLiteral("big.gguf")));
        QVERIFY(panel.fieldText("modelStatus").contains(QStringLiteral("Reading weights")));
        panel.setLoadProgress(250, QString()); // clamped
        QCOMPARE(progress->value(), 100);

        QSignalSpy cancelled(&panel, &ModelPanel::cancelLoadRequested);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QCOMPARE(cancelled.size(), 1);
        QVERIFY(!cancel->isEnabled()); // one request is enough

        panel.setLoadFailed(QStringLiteral("not a GGUF file (bad magic)"));
        QVERIFY(!panel.isLoading());
        QVERIFY(!cancel->isVisible());
        QVERIFY(!progress->isVisible());
        const QString status = panel.fieldText("modelStatus");
        QVERIFY2(status.contains(QStringLiteral("big.gguf")) &&
                     status.contains(QStringLiteral("bad magic")),
                 qPrintable(status));

        ModelMetadata m;
        m.name = QStringLiteral("Tiny");
        m.architecture = QStringLiteral("qwen2");
        m.format = QStringLiteral("GGUF");
        m.contextLength = 2048;
        m.hasChatTemplate = true;
        m.path = QStringLiteral("/models/tiny.gguf");
        panel.setLoading(m.path);
        panel.setModel(m);
        QVERIFY(!panel.isLoading());
        QVERIFY(!cancel->isVisible());
        QCOMPARE(panel.fieldText("modelName"), QStringLiteral("Tiny"));
        QVERIFY(panel.fieldText("modelArchitecture").contains(QStringLiteral("qwen2")));
        QVERIFY(!panel.fieldText("modelStatus").contains(QStringLiteral("bad magic")));
    }

    // Conversations generating at once are marked in the list (and unmarked when done).
    void conversationListMarksGenerating() {
        Database db(newPath("list.sqlite"));
        QVERIFY(db.open());
        ConversationStore store(db);
        ChatController controller(store);
        ScriptedEngine engine(controller);
        ConversationListModel model(store);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(&controller, &ChatController::conversationCreated, &model,
                &ConversationListModel::addConversation);
        connect(&controller, &ChatController::conversationChanged, &model,
                &ConversationListModel::refreshConversation);
        connect(&controller, &ChatController::generatingChanged, &model,
                &ConversationListModel::setGenerating);
        const auto a = controller.newConversation();
        const auto b = controller.newConversation();
        QVERIFY(a && b);
        auto generating = [&](qint64 id) {
            return model.index(model.rowOf(id))
                .data(ConversationListModel::GeneratingRole)
                .toBool();
        };
        QVERIFY(!generating(a->id));
        QVERIFY(model.index(model.rowOf(a->id)).data(Qt::DecorationRole).isNull());
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QVERIFY(controller.send(a->id, "one"));
        QVERIFY(controller.send(b->id, "two"));
        QVERIFY(generating(a->id));
        QVERIFY(generating(b->id));
        const QModelIndex ia = model.index(model.rowOf(a->id));
        QVERIFY(!ia.data(Qt::DecorationRole).value<QIcon>().isNull());
        QVERIFY(ia.data(Qt::FontRole).value<QFont>().italic());
        QVERIFY(ia.data(Qt::ToolTipRole).toString().contains("Generating"));
        QVERIFY(!changed.isEmpty());
        engine.answer(engine.requests_[0], {"done"});
        QVERIFY(!generating(a->id));
        QVERIFY(generating(b->id));
        engine.answer(engine.requests_[1], {"done"});
        QVERIFY(!generating(b->id));
        QVERIFY(model.index(model.rowOf(b->id)).data(Qt::DecorationRole).isNull());
    }

    // The strings of these widgets are in the zh_CN translation and switch live.
    void chineseTranslation() {
        ModelPanel panel;
        MarkdownView view;
        view.resize(400, 100);
        view.setMarkdownText(QStringLiteral("```\ncode\n```"));
        panel.setRecentModels({dir_.filePath(QStringLiteral("absent.gguf"))});
        auto* list = panel.findChild<QListWidget*>(QStringLiteral("recentModels"));
        auto* remove = panel.findChild<QPushButton*>(QStringLiteral("removeRecent"));
        auto* cancel = panel.findChild<QPushButton*>(QStringLiteral("cancelLoad"));
        QCOMPARE(remove->text(), QStringLiteral("Remove from list"));
        QTranslator zh;
        QVERIFY(zh.load(QStringLiteral(":/i18n/llmwb_zh_CN.qm")));
        QCoreApplication::installTranslator(&zh);
        QCoreApplication::processEvents();
        QCOMPARE(remove->text(), QStringLiteral("从列表中移除"));
        QCOMPARE(cancel->text(), QStringLiteral("取消"));
        QCOMPARE(list->item(0)->text(), QStringLiteral("absent.gguf（缺失）"));
        QCOMPARE(view.codeCopyButton(0)->text(), QStringLiteral("复制"));
        QCOMPARE(QCoreApplication::translate("llmwb::PresetStore", "Presets: %1"),
                 QStringLiteral("预设：%1"));
        panel.setLoading(QStringLiteral("/m/x.gguf"));
        panel.setLoadFailed(QStringLiteral("bad"));
        QCOMPARE(panel.fieldText("modelStatus"), QStringLiteral("无法加载 x.gguf：bad"));
        QCoreApplication::removeTranslator(&zh);
        QCoreApplication::processEvents();
        QCOMPARE(remove->text(), QStringLiteral("Remove from list"));
    }
};

QTEST_MAIN(TestUiChatWidgets)
#include "tst_ui_chat_widgets.moc"
