import type { StepContext } from './open.js';
import type { JourneyPage, StepResult } from './outcomes.js';

/**
 * One step of the customer's journey (docs/journey.md): a hosted page whose
 * GET shows it and whose POST submits its form. `Form` is the form as the
 * step reads it; `Deps` lists only what the step uses of the journey's
 * dependencies (`JourneyDeps`).
 */
export interface JourneyStep<Form, Deps> {
  /** The page the step stands for. */
  readonly page: JourneyPage;
  /** Each field of `Form`, by the name the page's form posts it under. */
  readonly fields: { readonly [K in keyof Form]-?: string };
  /** The page, or where the journey's state says to go instead. */
  show(context: StepContext, deps: Deps): Promise<StepResult>;
  /** What the posted form comes to. */
  submit(context: StepContext, form: Form, deps: Deps): Promise<StepResult>;
}
