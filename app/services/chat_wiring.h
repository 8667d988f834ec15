#pragma once

class QObject;

namespace llmwb {

class ChatController;
class EngineWorker;

// The chat's connections to the engine worker (a QObject living in its own thread): requests
// are queued to the worker, Stop reaches it directly (an atomic flag, so a running render or step
// sees it at once), and tokens/finished/failed come back to the controller in the GUI thread.
// main(), the tests and the benchmarks wire a chat the same way through this one function.
void connectChatToWorker(ChatController& controller, EngineWorker* worker);

} // namespace llmwb
