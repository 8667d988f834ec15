// A scripted engine for the chat widget tests: remembers each request the ChatController sends
// and plays its tokens and the end of the generation back, as the engine worker would.
#pragma once

#include <QList>
#include <QObject>
#include <QStringList>

#include "app/services/chat_controller.h"

namespace llmwb::test {

// Plays the engine: remembers each request; answer() streams tokens and finishes it.
class ScriptedEngine : public QObject {
  public:
    explicit ScriptedEngine(ChatController& c) : controller_(c) {
        connect(&c, &ChatController::generateRequested, this,
                [this](const GenerationRequest& r) { requests_ << r; });
        connect(&c, &ChatController::stopRequested, this, [this](quint64 id) { stopped_ << id; });
    }
    void answer(const GenerationRequest& r, const QStringList& tokens, bool cancelled = false,
                double tokensPerSecond = 42.5) {
        finish(r, tokens, cancelled ? FinishReason::Aborted : FinishReason::Stop, tokensPerSecond);
    }
    void finish(const GenerationRequest& r, const QStringList& tokens, FinishReason reason,
                double tokensPerSecond = 42.5) {
        for (const QString& t : tokens)
            controller_.onToken(r.requestId, r.conversationId, t);
        GenerationStats s;
        s.requestId = r.requestId;
        s.conversationId = r.conversationId;
        s.promptTokens = 9;
        s.completionTokens = tokens.size();
        s.ttftMs = 31;
        s.tokensPerSecond = tokensPerSecond;
        s.finishReason = reason;
        controller_.onFinished(s);
    }
    QList<GenerationRequest> requests_;
    QList<quint64> stopped_;

  private:
    ChatController& controller_;
};

} // namespace llmwb::test
