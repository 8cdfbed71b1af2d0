/**
 * Compile-time check that a shape function answers what its response schema declares: its
 * result is assignable to the schema's type, answers no field the schema does not declare and
 * misses none it requires (each variant of a union on its own). A difference is a type error
 * naming the fields. Used as
 * `type _Payment = Assert<Conforms<ReturnType<typeof paymentShape>, PaymentResponse>>;`.
 */
export type Conforms<Actual extends Declared, Declared> = Actual extends unknown
  ? [Exclude<keyof Actual, keyof Declared>, Exclude<RequiredKeys<Declared>, keyof Actual>] extends [never, never]
    ? true
    : FieldsDiffer<Exclude<keyof Actual, keyof Declared>, Exclude<RequiredKeys<Declared>, keyof Actual>>
  : never;

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** What a failed `Conforms` names (it must be `true`, so this type is the error message). */
export interface FieldsDiffer<Undeclared, Missing> {
  undeclared: Undeclared;
  missing: Missing;
}

/** Passes `true` only: `Assert<Conforms<…>>` fails to compile while the fields differ. */
export type Assert<T extends true> = T;
