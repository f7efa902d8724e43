package io.github.mongowriteguard.outcome;

/** What became of one write of a guarded bulk. Every index of the caller's bulk has exactly one. */
public enum WriteStatus {
    /** The server ran it and confirmed it (an update that matched nothing ran too). */
    APPLIED,
    /** Not sent: a later write on the same key (a replace with upsert, or a delete) decides the final document. */
    SUPERSEDED,
    /** Not sent: an earlier write it depends on failed or has an unknown outcome. */
    SKIPPED,
    /** The server refused it; see the error code and whether a retry is safe. */
    FAILED,
    /** The client stopped waiting: the server may still be applying it. */
    UNKNOWN
}
