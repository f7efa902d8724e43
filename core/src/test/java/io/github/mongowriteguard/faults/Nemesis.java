package io.github.mongowriteguard.faults;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Injects faults while the clients run, one at a time: a pause of 50-200 ms, a fault chosen by the seeded random
 * among the run's faults, kept for 400-1,500 ms, then healed. Stopping heals the fault in progress.
 */
final class Nemesis implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Nemesis.class);
    private final Deployment deployment;
    private final Random random;
    private final List<Fault> faults;
    private final Map<Fault, Integer> injected = Collections.synchronizedMap(new EnumMap<>(Fault.class));
    private volatile boolean stopped;
    private volatile Thread thread;

    Nemesis(Deployment deployment, Random random, List<Fault> faults) {
        this.deployment = deployment;
        this.random = random;
        this.faults = new ArrayList<>(faults);
        Collections.sort(this.faults);
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        while (!stopped) {
            if (!pause(50 + random.nextInt(150))) {
                break;
            }
            Fault fault = faults.get(random.nextInt(faults.size()));
            int length = 400 + random.nextInt(1100);
            Runnable heal;
            try {
                heal = deployment.inject(fault, random);
            } catch (RuntimeException e) {
                log.warn("nemesis: injecting {} failed", fault, e);
                continue;
            }
            injected.merge(fault, 1, Integer::sum);
            pause(length);
            try {
                heal.run();
            } catch (RuntimeException e) {
                log.warn("nemesis: healing {} failed", fault, e);
            }
        }
    }

    /** Sleeps; false when stopped. */
    private boolean pause(int millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
            return !stopped;
        } catch (InterruptedException e) {
            return false;
        }
    }

    void stop() {
        stopped = true;
        Thread running = thread;
        if (running != null) {
            running.interrupt();
        }
    }

    /** How many times each fault was injected. */
    Map<Fault, Integer> injected() {
        Map<Fault, Integer> copy = new EnumMap<>(Fault.class);
        synchronized (injected) {
            copy.putAll(injected);
        }
        return copy;
    }
}
