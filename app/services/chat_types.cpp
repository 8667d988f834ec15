#include "app/services/chat_types.h"

namespace llmwb {

QString messageStateName(MessageState s) {
    switch (s) {
    case MessageState::Complete: return QStringLiteral("complete");
    case MessageState::Streaming: return QStringLiteral("streaming");
    case MessageState::Stopped: return QStringLiteral("stopped");
    case MessageState::Error: return QStringLiteral("error");
    case MessageState::Interrupted: return QStringLiteral("interrupted");
    }
    return QStringLiteral("complete");
}

std::optional<MessageState> messageStateFromName(const QString& name) {
    for (MessageState s : {MessageState::Complete, MessageState::Streaming, MessageState::Stopped,
                           MessageState::Error, MessageState::Interrupted}) {
        if (messageStateName(s) == name)
            return s;
    }
    return std::nullopt;
}

}  // namespace llmwb
