/**
 * `GET /s/{token}/qr.svg`: a personal link as a QR code, for a letter or a card handed to someone without e-mail.
 * Made here by the `qrcode` library (no network: the link is a credential, and no QR service may see it), as SVG
 * so that it prints sharply at any size. The answer page's router serves it under that page's rules (an unknown
 * token 404, an expired or used one 410, a survey not open 409), so a code printed for a link that no longer works
 * can be found out before it is handed over.
 */
import type { Response } from 'express';
import QRCode from 'qrcode';

/**
 * The SVG of `url`: error correction M (15% of the symbol may be smudged or torn and it still reads), and the quiet
 * zone of 4 modules the standard asks for, so it scans on any background.
 */
export function qrCodeSvg(url: string): Promise<string> {
  return QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
}

export async function sendQrCode(res: Response, url: string): Promise<void> {
  const svg = await qrCodeSvg(url);
  res.status(200);
  res.setHeader('Content-Type', 'image/svg+xml; charset=utf-8');
  // The image of a link never changes, but whether the link still works does: a browser may keep it an hour. Only
  // a browser: the URL holds the token, so no shared cache may store it.
  res.setHeader('Cache-Control', 'private, max-age=3600');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Opened on its own, an SVG is a document: this one needs nothing but itself.
  res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
  res.send(svg);
}
