package io.github.mongowriteguard.internal.execution;

import io.github.mongowriteguard.internal.command.DecimalDigits;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The comments that name the server copies of one guarded bulk, {@code mwg:<write id>:<round>.<command>}: the write
 * id is 16 hex digits of a random long, its lowest byte first (as the hex of its little-endian bytes). Each name is
 * written in one go into one array, the id's digits from the long itself, without a string for the id and a
 * concatenation per command.
 */
final class CopyNames {
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final int PREFIX = "mwg:".length() + 16 + 1;

    private final long writeId;

    /** Names from a new random write id. */
    CopyNames() {
        this(ThreadLocalRandom.current().nextLong());
    }

    CopyNames(long writeId) {
        this.writeId = writeId;
    }

    /** The name of the {@code command}th command (from 1) of the call, sent in round {@code round}. */
    String name(int round, int command) {
        int roundDigits = digits(round);
        int commandDigits = digits(command);
        byte[] name = new byte[PREFIX + roundDigits + 1 + commandDigits];
        name[0] = 'm';
        name[1] = 'w';
        name[2] = 'g';
        name[3] = ':';
        // the id's bytes from the lowest up, two digits each
        for (int b = 0; b < 8; b++) {
            int value = (int) (writeId >>> (8 * b)) & 0xff;
            name[4 + 2 * b] = HEX[value >>> 4];
            name[5 + 2 * b] = HEX[value & 0xf];
        }
        name[PREFIX - 1] = ':';
        int dot = DecimalDigits.write(round, roundDigits, name, PREFIX);
        name[dot] = '.';
        DecimalDigits.write(command, commandDigits, name, dot + 1);
        return new String(name, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private static int digits(int value) {
        if (value < 0) {
            throw new IllegalArgumentException("a round or command number is never negative: " + value);
        }
        return DecimalDigits.count(value);
    }
}
