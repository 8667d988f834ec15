#include "app/services/chat_types.h"

namespace llmwb {

QString messageStateName(MessageState s) {
    switch (s) {
    case MessageState::Complete:
        return QStringLiteral("complete");
    case MessageState::Streaming:
        return QStringLiteral("streaming");
    case MessageState::Stopped:
        return QStringLiteral("stopped");
    case MessageState::Error:
        return QStringLiteral("error");
    case MessageState::Interrupted:
        return QStringLiteral("interrupted");
    case MessageState::Truncated:
        return QStringLiteral("truncated");
    }
    return QStringLiteral("complete");
}

std::optional<MessageState> messageStateFromName(const QString& name) {
    for (MessageState s :
         {MessageState::Complete, MessageState::Streaming, MessageState::Stopped,
          MessageState::Error, MessageState::Interrupted, MessageState::Truncated}) {
        if (messageStateName(s) == name)
            return s;
    }
    return std::nullopt;
}

QString finishReasonName(FinishReason r) {
    switch (r) {
    case FinishReason::None:
        return {};
    case FinishReason::Stop:
        return QStringLiteral("stop");
    case FinishReason::Length:
        return QStringLiteral("length");
    case FinishReason::Aborted:
        return QStringLiteral("abort");
    case FinishReason::Context:
        return QStringLiteral("context");
    case FinishReason::KvPool:
        return QStringLiteral("kv_pool");
    case FinishReason::Error:
        return QStringLiteral("error");
    }
    return {};
}

std::optional<FinishReason> finishReasonFromName(const QString& name) {
    for (FinishReason r : {FinishReason::Stop, FinishReason::Length, FinishReason::Aborted,
                           FinishReason::Context, FinishReason::KvPool, FinishReason::Error}) {
        if (finishReasonName(r) == name)
            return r;
    }
    return std::nullopt;
}

} // namespace llmwb
