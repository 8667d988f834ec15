// The one instantiation of nlohmann/json's parser, lexer and serializer (json_templates.h).
#include "engine/util/json_templates.h"

LLMWB_JSON_TEMPLATES()
