import type { Caller } from "../api/types.js";

/** What to publish so that receivers send aggregate reports here. */
export function PublishRua({ caller }: { caller: Caller }) {
  const rua =
    caller.report_addresses.find((address) => address.startsWith("rua@")) ?? caller.report_addresses[0];
  if (!rua && caller.mail_intake?.imap) {
    return (
      <p>
        Point the <code>rua</code> of each domain's DMARC record at the mailbox this service reads (IMAP), or
        upload reports you receive on the Intake page.
      </p>
    );
  }
  if (!rua && caller.mail_intake) {
    return (
      <p>
        This service receives no reports by mail: neither SMTP nor IMAP intake is set up (docs/intake.md).
        Upload the reports you receive on the Intake page, or send them through the API.
      </p>
    );
  }
  if (!rua) {
    return (
      <p>
        Point the <code>rua</code> of each domain's DMARC record at an address whose mail reaches this
        service, or upload reports you receive on the Intake page.
      </p>
    );
  }
  return (
    <div>
      <p>Publish this DMARC record for each domain (or add the address to the rua tag you have):</p>
      <pre class="record">_dmarc.&lt;your domain&gt; TXT "v=DMARC1; p=none; rua=mailto:{rua}"</pre>
    </div>
  );
}
