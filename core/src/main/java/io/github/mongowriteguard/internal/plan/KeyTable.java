package io.github.mongowriteguard.internal.plan;

import org.bson.BsonValue;

/**
 * Numbers the distinct keys of a bulk 0, 1, 2, ... so that the later steps work on int arrays indexed by key number
 * instead of hash maps: the one hash table of the plan lives here. Open addressing over one int array (per slot, the
 * first write of a key and some bits of the key's hash as {@link IdKey} computes it; the number is that write's),
 * sized for every write once, so that numbering allocates nothing per write: the {@code _id}s are compared as
 * {@link IdKey} compares them, without an {@code IdKey} object per write.
 */
final class KeyTable {

    /**
     * Slots per segment. The table is cut into segments so that no array is "humongous" for G1 (half a region or more,
     * 512 KiB on small heaps): such an array lives in the old generation, and measured with 100,000 writes (when the
     * table held references), young collections in the middle of planning then took 70 to 90 ms each instead of under
     * 10.
     */
    private static final int SEGMENT_BITS = 14;

    private static final int SEGMENT_SIZE = 1 << SEGMENT_BITS;

    /**
     * Per slot, 0 for an empty one: the index + 1 of the first write of the slot's key in the low {@link #indexBits}
     * bits, the top bits of the key's hash above them. The hash bits only spare most comparisons of different keys
     * ({@link IdKey#same} decides), so a bulk of any size is numbered exactly; one array instead of one for writes and
     * one for hashes (100,000 writes: 1 MiB instead of 2).
     */
    private final int[][] slots;

    /** Bits that hold a write's index + 1: enough for the bulk's size. */
    private final int indexBits;

    private final int indexMask;
    private final int mask;
    private int count;

    KeyTable(int expectedWrites) {
        int wanted = (int) Math.min(1 << 30, Math.max(16L, expectedWrites * 2L + 1));
        int capacity = Integer.highestOneBit(wanted - 1) << 1; // a power of two, at most half full
        int segmentSize = Math.min(capacity, SEGMENT_SIZE);
        this.slots = new int[capacity / segmentSize][segmentSize];
        this.mask = capacity - 1;
        this.indexBits = Math.min(31, 32 - Integer.numberOfLeadingZeros(Math.max(1, expectedWrites)));
        this.indexMask = (1 << indexBits) - 1;
    }

    /** Gives every keyed write whose key is known, and that has no number yet, its key's number. */
    void numberKeys(WriteFacts[] facts) {
        for (int i = 0; i < facts.length; i++) {
            WriteFacts write = facts[i];
            if (write.keyNumber >= 0) {
                continue;
            }
            if (write.id != null) {
                write.keyNumber = numberOf(facts, i, write.id, write.idHash);
            } else if (write.freshKey) {
                write.keyNumber = count++; // an _id generated when sent: a key of its own
            }
        }
    }

    private int numberOf(WriteFacts[] facts, int index, BsonValue id, int idHash) {
        int hash = spread(idHash);
        int tag = hash >>> indexBits << indexBits; // the hash's top bits, where the slot holds them
        int slot = hash & mask;
        while (true) {
            int segment = slot >>> SEGMENT_BITS;
            int offset = slot & (SEGMENT_SIZE - 1);
            int held = slots[segment][offset];
            if (held == 0) {
                slots[segment][offset] = tag | (index + 1);
                return count++;
            }
            if ((held & ~indexMask) == tag) {
                WriteFacts first = facts[(held & indexMask) - 1];
                if (IdKey.same(first.id, id)) {
                    return first.keyNumber;
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /** Mixes the high bits in, so that keys whose hashes differ only there do not share a run of slots. */
    private static int spread(int hash) {
        int h = hash * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /** Number of distinct keys so far. */
    int count() {
        return count;
    }
}
