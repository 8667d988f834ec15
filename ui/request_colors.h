// A stable colour per engine request id, shared by the KV block map and the batch timeline.
#pragma once

#include <QColor>

namespace llmwb {

// Same id, same colour; neighbouring ids get far-apart hues (golden-angle steps).
QColor requestColor(qint64 requestId);

} // namespace llmwb
