#include "engine/model/model_config.h"

namespace llmwb {

const char* architecture_name(Architecture a) {
    switch (a) {
    case Architecture::Llama:
        return "llama";
    case Architecture::Qwen2:
        return "qwen2";
    case Architecture::Qwen3:
        return "qwen3";
    }
    return "?";
}

} // namespace llmwb
