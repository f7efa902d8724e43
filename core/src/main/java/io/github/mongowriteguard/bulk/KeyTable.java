package io.github.mongowriteguard.bulk;

import java.util.HashMap;
import java.util.Map;

/**
 * Numbers the distinct keys of a bulk 0, 1, 2, ... so that the later steps work on int arrays indexed by key number
 * instead of hash maps: the one hash map of the plan lives here.
 */
final class KeyTable {

    private final Map<IdKey, Integer> numbers;
    private int count;

    KeyTable(int expectedWrites) {
        this.numbers = new HashMap<>(Math.max(16, expectedWrites * 4 / 3 + 1));
    }

    /** Gives every keyed write whose key is known, and that has no number yet, its key's number. */
    void numberKeys(WriteFacts[] facts) {
        for (WriteFacts write : facts) {
            if (write.key != null && write.keyNumber < 0) {
                write.keyNumber = write.id == null ? count++ : numberOf(write.key); // no _id yet: a key of its own
            }
        }
    }

    private int numberOf(IdKey key) {
        Integer existing = numbers.putIfAbsent(key, count);
        if (existing != null) {
            return existing;
        }
        return count++;
    }

    /** Number of distinct keys so far. */
    int count() {
        return count;
    }
}
