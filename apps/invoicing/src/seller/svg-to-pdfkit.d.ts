// svg-to-pdfkit ships no types: the one call Recur makes (draw an SVG into a pdfkit document).
declare module 'svg-to-pdfkit' {
  export default function SVGtoPDF(
    document: PDFKit.PDFDocument,
    svg: string,
    x: number,
    y: number,
    options?: { width?: number; height?: number; preserveAspectRatio?: string },
  ): void;
}
