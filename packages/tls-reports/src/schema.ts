import { z } from "zod";
import { tlsLimits } from "./limits.js";

const text = z.string().max(tlsLimits.maxFieldChars);
const optionalText = text.nullish();
const sessions = z.number().int().min(0).max(tlsLimits.maxSessions);
const textList = z.array(text).max(tlsLimits.maxListEntries);

/**
 * RFC 8460 §4 as reporters write it: the field names of the RFC's schema (§4.4) and of its example
 * where they differ (`mx-host-pattern` / `mx-host`, `additional-info-uri` /
 * `additional-information`), one string where a list is due, null for an absent optional field.
 * Unknown fields are allowed and ignored (§4: "MAY include additional fields"); a known field
 * of the wrong type refuses the report.
 */
export const failureDetailSchema = z.looseObject({
  "result-type": text,
  "sending-mta-ip": optionalText,
  "receiving-mx-hostname": optionalText,
  "receiving-mx-helo": optionalText,
  "receiving-ip": optionalText,
  "failed-session-count": sessions,
  "additional-information": optionalText,
  "additional-info-uri": optionalText,
  "failure-reason-code": optionalText,
  // The RFC's example spells it so (§4.5).
  "failure-error-code": optionalText,
});

export const policySchema = z.looseObject({
  policy: z.looseObject({
    "policy-type": text,
    "policy-string": z.union([text, textList]).nullish(),
    "policy-domain": optionalText,
    "mx-host": z.union([text, textList]).nullish(),
    "mx-host-pattern": z.union([text, textList]).nullish(),
  }),
  summary: z.looseObject({
    "total-successful-session-count": sessions,
    "total-failure-session-count": sessions,
  }),
  "failure-details": z.array(failureDetailSchema).max(tlsLimits.maxFailureDetails).nullish(),
});

export const reportSchema = z.looseObject({
  "organization-name": text,
  "date-range": z.looseObject({ "start-datetime": text, "end-datetime": text }),
  "contact-info": optionalText,
  "report-id": text,
  policies: z.array(policySchema).max(tlsLimits.maxPolicies),
});

export type ReportJson = z.infer<typeof reportSchema>;
