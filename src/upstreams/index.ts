/**
 * The providers' ports, as areas and the service context see them: `ctx.upstreams` (`Upstreams`),
 * each provider's interface (`<provider>/port.ts`) and what every port shares (`port.ts`). The
 * adapters behind them are built by `create-upstreams.ts` at start-up; areas never import them.
 */
import type { CardUpstream } from './card/port.js';
import type { ChainUpstream } from './chain/port.js';
import type { KycUpstream } from './kyc/port.js';
import type { Notifier } from './notifier/port.js';
import type { QrPayUpstream } from './qrpay/port.js';
import type { RateSource } from './rates/port.js';
import type { RemittanceUpstream } from './remittance/port.js';

export * from './port.js';
export type { CardUpstream, ChainUpstream, KycUpstream, Notifier, QrPayUpstream, RemittanceUpstream, RateSource };

/** One adapter per upstream, chosen by configuration at start-up (ServiceContext.upstreams). */
export interface Upstreams {
  remittance: RemittanceUpstream;
  card: CardUpstream;
  qrpay: QrPayUpstream;
  chain: ChainUpstream;
  /** Identity verification (not money-moving: no behaviour injection; `kyc/`). */
  kyc: KycUpstream;
  /** Delivers one-time codes to members (step-up). Not a money-moving upstream: no behaviour injection. */
  notifier: Notifier;
  /** The one rate service (not an injectable upstream: it moves no money). */
  rates: RateSource;
}
