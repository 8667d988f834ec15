#include "app/services/engine_view.h"

namespace llmwb {

void registerEngineViewTypes() {
    qRegisterMetaType<llmwb::EngineSnapshot>("llmwb::EngineSnapshot");
    qRegisterMetaType<llmwb::EngineView>("llmwb::EngineView");
}

} // namespace llmwb
