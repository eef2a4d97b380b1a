export * from './engine';
export * from './model';
export * from './proration';
export * from './usage';
// The one rounding rule lives with Money; pricing applies it once, to the subtotal.
export { roundHalfUp } from '@recur/money';
