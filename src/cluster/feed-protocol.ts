// What the serving thread (feed-thread.ts) and the feed's loader thread (feed-service.ts) say to
// each other. One loader thread holds one ManifestFeed for a set of manifest paths and options,
// and builds, after each load, every view subscribed to it: a view is what one reader needs from
// the model (the kubernetes plugin's store image, say), built where the model is, and handed
// over in parts, each when the serving thread asks for it, so that taking it in never blocks
// answering for long.
import type { ClusterModel, ClusterOptions } from './model/model.js';
import type { Finding } from './model/finding.js';
import type { FeedTimings } from './feed.js';

export interface FeedInit {
  readonly paths: readonly string[];
  readonly cluster: ClusterOptions;
}

/** What a load reports besides the views. */
export interface FeedSummary {
  /** Counts up with every load the feed ran; a view's parts carry the one they come from. */
  readonly gen: number;
  readonly findings: Finding[];
  readonly objectCount: number;
  /** Objects left out because the API server would reject them. */
  readonly rejected: number;
  readonly ignoredKinds: Record<string, number>;
  readonly pods: number;
  readonly endpointSlices: number;
  /** Files read by this load (all of them when `full`). */
  readonly reread: number;
  readonly full: boolean;
  readonly timings: FeedTimings;
  /** Handed over from a persisted image (feed-image.ts): no file was read. */
  readonly image?: boolean;
}

/** What a view builder is given: the model of the last load and its summary. */
export interface ViewInput {
  readonly model: ClusterModel;
  readonly summary: FeedSummary;
}

export interface ViewPart {
  readonly part: unknown;
  /** Buffers moved to the serving thread instead of copied (read there in place). */
  readonly transfer?: readonly ArrayBuffer[];
}

export interface ViewOutput {
  /** The parts, produced as the serving thread asks for them. */
  readonly parts: Iterable<ViewPart>;
  /**
   * Work to run once every part is handed over, when no newer load waits (a count for a gauge):
   * its result follows unasked as an `after` message.
   */
  readonly after?: () => unknown;
}

/**
 * A view builder: the module's `buildView` export, run in the loader thread. `args` is plain
 * data (structured-cloneable), the same for every subscriber that shares the view.
 */
export type ViewBuilder = (input: ViewInput, args: unknown) => ViewOutput;

export type ToFeed =
  /** Read what changed (every file the first time) and build every view; `req` names the request in the reply. */
  | { readonly type: 'load'; readonly req: number; readonly reclaim: boolean }
  /** Subscribe a view; built now when a model is loaded, and after every load. */
  | { readonly type: 'view'; readonly id: number; readonly module: string; readonly args: unknown }
  | { readonly type: 'drop'; readonly id: number }
  /** The serving thread took the last part of view `id`'s build `gen`: the next, please. */
  | { readonly type: 'next'; readonly id: number; readonly gen: number };

export type FromFeed =
  /** A load done (the views follow); `req` absent: another reader's request (serve --workers). */
  | { readonly type: 'loaded'; readonly req?: number; readonly summary: FeedSummary }
  | { readonly type: 'failed'; readonly req?: number; readonly findings?: Finding[]; readonly message?: string; readonly stack?: string }
  /** `raw`: the part is v8-serialized bytes (from an image), deserialized by the taker. */
  | { readonly type: 'part'; readonly id: number; readonly gen: number; readonly part: unknown; readonly raw?: boolean }
  | { readonly type: 'end'; readonly id: number; readonly gen: number }
  | { readonly type: 'after'; readonly id: number; readonly gen: number; readonly value: unknown }
  | { readonly type: 'view-failed'; readonly id: number; readonly gen: number; readonly message: string; readonly stack?: string }
  /** Something the loader could not do that serving goes on without (the image: not read, not written). */
  | { readonly type: 'warn'; readonly detail: object; readonly message: string };
