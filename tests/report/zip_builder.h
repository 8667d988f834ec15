// A zip archive written byte by byte, for tests of hostile archives: every field an attacker
// controls (names, external attributes, "version made by", the sizes and CRC the headers claim,
// the entry count the end record claims, zip64) is set by the test. Local headers repeat the
// central directory's claims, as a careful attacker's would (minizip compares them).
#pragma once

#include <QByteArray>
#include <QList>
#include <algorithm>
#include <cstdint>
#include <zlib.h>

namespace llmwb::test {

inline uint32_t crc_of(const QByteArray& data) {
    return static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                       reinterpret_cast<const Bytef*>(data.constData()),
                                       static_cast<uInt>(data.size())));
}

// Raw deflate (no zlib header), as zip stores it.
inline QByteArray deflate_raw(const QByteArray& data) {
    z_stream z{};
    deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    QByteArray out(static_cast<qsizetype>(deflateBound(&z, static_cast<uLong>(data.size()))), 0);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.constData()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(static_cast<qsizetype>(z.total_out));
    deflateEnd(&z);
    return out;
}

// `bytes` zero bytes deflated without holding them: a bomb's payload. *crc gets their CRC.
inline QByteArray deflate_zeros(int64_t bytes, uint32_t* crc) {
    const QByteArray zeros(1 << 20, '\0');
    z_stream z{};
    deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    QByteArray out;
    QByteArray chunk(1 << 16, 0);
    uLong c = crc32(0L, Z_NULL, 0);
    int64_t left = bytes;
    int flush = Z_NO_FLUSH;
    while (flush != Z_FINISH) {
        const auto n = static_cast<uInt>(std::min<int64_t>(left, zeros.size()));
        left -= n;
        c = crc32(c, reinterpret_cast<const Bytef*>(zeros.constData()), n);
        flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.constData()));
        z.avail_in = n;
        do {
            z.next_out = reinterpret_cast<Bytef*>(chunk.data());
            z.avail_out = static_cast<uInt>(chunk.size());
            deflate(&z, flush);
            out.append(chunk.constData(), chunk.size() - static_cast<qsizetype>(z.avail_out));
        } while (z.avail_out == 0);
    }
    deflateEnd(&z);
    *crc = static_cast<uint32_t>(c);
    return out;
}

struct ZipEntrySpec {
    QByteArray name;
    QByteArray payload;        // the bytes stored in the archive (already deflated for method 8)
    uint16_t method = 0;       // 0 stored, 8 deflate, anything else to test refusals
    uint16_t flags = 0;        // bit 0: encrypted
    uint32_t crc = 0;          // as claimed
    uint32_t csize = 0;        // as claimed
    uint32_t usize = 0;        // as claimed
    uint16_t made_by = 0x031e; // unix (3), zip 3.0
    uint32_t external = (0100644u << 16) | 0u; // a unix regular file, rw-r--r--
};

// A truthful entry (the sizes and CRC of `content`), stored or deflated.
inline ZipEntrySpec zip_entry(const QByteArray& name, const QByteArray& content,
                              bool deflated = true) {
    ZipEntrySpec e;
    e.name = name;
    e.payload = deflated ? deflate_raw(content) : content;
    e.method = deflated ? 8 : 0;
    e.crc = crc_of(content);
    e.csize = static_cast<uint32_t>(e.payload.size());
    e.usize = static_cast<uint32_t>(content.size());
    return e;
}

class ZipBuilder {
  public:
    ZipBuilder& add(const ZipEntrySpec& e) {
        entries_.append(e);
        return *this;
    }
    // The count the end record claims (default: the real count); zip64 writes it in a zip64 end
    // record (the only way to claim more than 65,535).
    ZipBuilder& claimEntries(uint64_t n, bool zip64 = false) {
        claimed_ = n;
        zip64_ = zip64;
        return *this;
    }

    QByteArray bytes() const {
        QByteArray out, central;
        for (const ZipEntrySpec& e : entries_) {
            const auto offset = static_cast<uint32_t>(out.size());
            u32(out, 0x04034b50);
            u16(out, 20);
            u16(out, e.flags);
            u16(out, e.method);
            u16(out, 0x6000); // 12:00:00
            u16(out, 0x5981); // 2024-12-01
            u32(out, e.crc);
            u32(out, e.csize);
            u32(out, e.usize);
            u16(out, static_cast<uint16_t>(e.name.size()));
            u16(out, 0);
            out.append(e.name);
            out.append(e.payload);

            u32(central, 0x02014b50);
            u16(central, e.made_by);
            u16(central, 20);
            u16(central, e.flags);
            u16(central, e.method);
            u16(central, 0x6000);
            u16(central, 0x5981);
            u32(central, e.crc);
            u32(central, e.csize);
            u32(central, e.usize);
            u16(central, static_cast<uint16_t>(e.name.size()));
            u16(central, 0); // extra
            u16(central, 0); // comment
            u16(central, 0); // disk
            u16(central, 0); // internal attributes
            u32(central, e.external);
            u32(central, offset);
            central.append(e.name);
        }
        const auto cd_offset = static_cast<uint32_t>(out.size());
        out.append(central);
        const uint64_t count = claimed_ ? claimed_ : static_cast<uint64_t>(entries_.size());
        if (zip64_) {
            const auto record = static_cast<uint64_t>(out.size());
            u32(out, 0x06064b50);
            u64(out, 44);
            u16(out, 45);
            u16(out, 45);
            u32(out, 0);
            u32(out, 0);
            u64(out, count);
            u64(out, count);
            u64(out, static_cast<uint64_t>(central.size()));
            u64(out, cd_offset);
            u32(out, 0x07064b50);
            u32(out, 0);
            u64(out, record);
            u32(out, 1);
        }
        u32(out, 0x06054b50);
        u16(out, 0);
        u16(out, 0);
        const auto count16 = static_cast<uint16_t>(zip64_ ? 0xffff : count);
        u16(out, count16);
        u16(out, count16);
        u32(out, static_cast<uint32_t>(central.size()));
        u32(out, cd_offset);
        u16(out, 0);
        return out;
    }

  private:
    static void u16(QByteArray& b, uint16_t v) {
        b.append(static_cast<char>(v & 0xff));
        b.append(static_cast<char>(v >> 8));
    }
    static void u32(QByteArray& b, uint32_t v) {
        u16(b, static_cast<uint16_t>(v & 0xffff));
        u16(b, static_cast<uint16_t>(v >> 16));
    }
    static void u64(QByteArray& b, uint64_t v) {
        u32(b, static_cast<uint32_t>(v & 0xffffffffu));
        u32(b, static_cast<uint32_t>(v >> 32));
    }

    QList<ZipEntrySpec> entries_;
    uint64_t claimed_ = 0;
    bool zip64_ = false;
};

} // namespace llmwb::test
