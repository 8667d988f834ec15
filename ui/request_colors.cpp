#include "ui/request_colors.h"

#include <cmath>

namespace llmwb {

QColor requestColor(qint64 requestId) {
    const quint64 id = quint64(requestId < 0 ? -requestId : requestId);
    // Hues 20..340: pure red is kept for the preemption marks.
    const int hue = 20 + int(std::fmod(double(id % 100000) * 137.508, 320.0));
    const int sat = 150 + int((id / 7) % 3) * 35; // 150, 185, 220
    const int val = 235 - int((id / 3) % 3) * 30; // 235, 205, 175
    return QColor::fromHsv(hue, sat, val);
}

} // namespace llmwb
