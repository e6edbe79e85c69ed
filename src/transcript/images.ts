import { createHash } from 'node:crypto';
import type { Message, Part } from '../core/index.js';
import { invalidRequest } from '../errors/index.js';

/**
 * A decoded, checked image from a user message, or a PDF document: both are media type and bytes,
 * carried, counted and fingerprinted alike (only a CLI that takes documents is given one).
 */
export interface Image {
  mediaType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | 'application/pdf';
  data: Buffer;
  sha256: string;
  /** Where it came from, for error messages (`messages.3.content.1`). */
  part: string;
}

export interface ImageLimits {
  /** Largest decoded image, bytes. */
  maxBytes: number;
  /** Most images in one request. */
  maxCount: number;
  /** Largest total of decoded images, bytes. */
  maxTotalBytes: number;
  /** Fetch http(s) image URLs (off unless the operator enables it). */
  fetchRemote: boolean;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  maxBytes: 5 * 1024 * 1024,
  maxCount: 8,
  maxTotalBytes: 20 * 1024 * 1024,
  fetchRemote: false,
};

/** Whether this is a document (a PDF) rather than an image. */
export function isDocument(img: Pick<Image, 'mediaType'>): boolean {
  return img.mediaType === 'application/pdf';
}

const MAGIC: [Image['mediaType'], (b: Buffer) => boolean][] = [
  ['image/png', (b) => b.length > 8 && b.readUInt32BE(0) === 0x89504e47],
  ['image/jpeg', (b) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.length > 6 && b.subarray(0, 4).toString('latin1') === 'GIF8'],
  [
    'image/webp',
    (b) =>
      b.length > 12 &&
      b.subarray(0, 4).toString('latin1') === 'RIFF' &&
      b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
];

/** The image type from its first bytes, or undefined when it is none of the four the CLIs take. */
function sniff(data: Buffer): Image['mediaType'] | undefined {
  return MAGIC.find(([, test]) => test(data))?.[0];
}

function refuse(part: string, why: string, kind: 'image' | 'document' = 'image'): never {
  throw invalidRequest(`Invalid ${kind} in '${part}': ${why}`, part, `invalid_${kind}`);
}

/** The bytes of a base64 data URL within the size limit, or a 400 naming the part. */
function decodeDataUrl(url: string, part: string, maxBytes: number, kind: 'image' | 'document'): Buffer {
  const m = /^data:([a-z]+\/[a-z0-9.+-]+)?(;[^,]*)?,(.*)$/is.exec(url);
  if (!m)
    refuse(part, `expected a data: URL (data:${kind === 'image' ? 'image/png' : 'application/pdf'};base64,…)`, kind);
  if (!/;base64/i.test(m[2] ?? '')) refuse(part, 'the data URL must be base64-encoded', kind);
  const b64 = m[3]!.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) refuse(part, 'the base64 data is not valid', kind);
  if ((b64.length * 3) / 4 > maxBytes + 3) refuse(part, `the ${kind} is larger than ${maxBytes} bytes`, kind);
  const data = Buffer.from(b64, 'base64');
  if (data.length === 0) refuse(part, `the ${kind} is empty`, kind);
  if (data.length > maxBytes) refuse(part, `the ${kind} is larger than ${maxBytes} bytes`, kind);
  return data;
}

/** Decodes and checks one image part: a data URL of PNG, JPEG, GIF or WebP within the size limit. */
export function toImage(url: string, part: string, limits: ImageLimits): Image {
  if (isRemote(url)) {
    refuse(
      part,
      limits.fetchRemote
        ? 'remote images must be fetched before decoding'
        : 'remote image URLs are not fetched by this server ' +
            '(send the image as a data: URL, or ask the operator to enable imageFetch)',
    );
  }
  const data = decodeDataUrl(url, part, limits.maxBytes, 'image');
  const mediaType = sniff(data);
  if (!mediaType) refuse(part, 'the data is not a PNG, JPEG, GIF or WebP image');
  return { mediaType, data, sha256: createHash('sha256').update(data).digest('hex'), part };
}

/**
 * Decodes and checks one document: a base64 data URL of a PDF within the image size limit (a
 * document is counted with the request's images, against the same count and total limits).
 */
export function toDocument(url: string, part: string, limits: ImageLimits): Image {
  const data = decodeDataUrl(url, part, limits.maxBytes, 'document');
  if (data.subarray(0, 5).toString('latin1') !== '%PDF-') refuse(part, 'the data is not a PDF', 'document');
  return { mediaType: 'application/pdf', data, sha256: createHash('sha256').update(data).digest('hex'), part };
}

/** Count and total-size limits across a request's images (its documents counted with them). */
export function checkImageTotals(images: readonly Image[], limits: ImageLimits): void {
  const what = images.some(isDocument) ? 'images and documents' : 'images';
  if (images.length > limits.maxCount)
    refuse(images[limits.maxCount]!.part, `a request may carry at most ${limits.maxCount} ${what}`);
  let total = 0;
  for (const img of images) {
    total += img.data.length;
    if (total > limits.maxTotalBytes)
      refuse(img.part, `the ${what} of a request may total at most ${limits.maxTotalBytes} bytes`);
  }
}

/** The bytes of one http(s) image, bounded in size and time, or a 400 naming its part. */
async function fetchImage(url: string, part: string, limits: ImageLimits): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'follow' });
  } catch (err) {
    return refuse(part, `could not fetch the image (${(err as Error).message})`);
  }
  if (!res.ok) refuse(part, `fetching the image gave HTTP ${res.status}`);
  if (Number(res.headers.get('content-length') ?? 0) > limits.maxBytes)
    refuse(part, `the image is larger than ${limits.maxBytes} bytes`);
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > limits.maxBytes) refuse(part, `the image is larger than ${limits.maxBytes} bytes`);
  return body;
}

/**
 * Replaces http(s) image URLs with data URLs, when the operator allows fetching them; bounded in
 * size and time. Messages are copied, never changed in place.
 */
export async function fetchRemoteImages(messages: readonly Message[], limits: ImageLimits): Promise<Message[]> {
  if (!limits.fetchRemote) return [...messages];
  return Promise.all(
    messages.map(async (m) => {
      if (!m.parts.some((p) => p.type === 'image' && isRemote(p.url))) return m;
      const parts = await Promise.all(
        m.parts.map(async (p): Promise<Part> => {
          if (p.type !== 'image' || !isRemote(p.url)) return p;
          const body = await fetchImage(p.url, p.at, limits);
          return { ...p, url: `data:application/octet-stream;base64,${body.toString('base64')}` };
        }),
      );
      return { ...m, parts };
    }),
  );
}

/** An http(s) URL: an image the client did not send itself. */
export function isRemote(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
