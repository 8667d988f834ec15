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
    case Architecture::Gemma2:
        return "gemma2";
    case Architecture::Gemma3:
        return "gemma3";
    case Architecture::Phi3:
        return "phi3";
    case Architecture::Qwen3Moe:
        return "qwen3moe";
    }
    return "?";
}

} // namespace llmwb
