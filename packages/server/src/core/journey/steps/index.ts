import type { JourneyDeps } from '../deps.js';
import type { JourneyStep } from '../step.js';
import { consentStep } from './consent.js';
import { loginStep } from './login.js';
import { newPinStep } from './new-pin.js';
import { otpStep } from './otp.js';
import { registerStep } from './register.js';
import { resetOtpStep } from './reset-otp.js';
import { resetStep } from './reset.js';

/** A step as the table holds it: any form, given all of the journey's dependencies. */
export type AnyJourneyStep = JourneyStep<Readonly<Record<string, string | undefined>>, JourneyDeps>;

/** The step table: every hosted page of the journey (docs/journey.md), each registered at its path. */
export const JOURNEY_STEPS: readonly AnyJourneyStep[] = [loginStep, registerStep, otpStep, resetStep, resetOtpStep, newPinStep, consentStep];
