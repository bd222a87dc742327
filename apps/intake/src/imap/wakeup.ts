/**
 * Sleeps that end early when woken. A wake while nobody sleeps is remembered, so news that arrives
 * during a scan (new mail, a dropped connection, stop) is not missed by the sleep after it.
 */
export class Wakeup {
  private pending = false;
  private current: (() => void) | null = null;

  wake(): void {
    if (this.current) {
      this.current();
    } else {
      this.pending = true;
    }
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.current = null;
        resolve();
      }
      this.current = done;
    });
  }
}
