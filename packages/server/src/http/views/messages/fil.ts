import type { Catalogue } from './catalogue.js';

// Filipino does not inflect a noun after a number: "1 minuto", "12 minuto".
const afterMinutes = (n: number) => `pagkalipas ng ${n} minuto`;

/**
 * The hosted pages in Filipino, as Philippine banking and e-wallet apps
 * speak it: Tagalog-based, keeping the English words those apps keep
 * (PIN, SMS, code, account, mobile, app, link).
 */
export const fil: Catalogue = {
  page: {
    secureSignIn: 'Ligtas na pag-sign in',
    safetyReminder: 'Huwag ibigay kahit kanino ang iyong PIN o one-time code. Hindi kailanman hihingin ng Connect ang mga ito sa tawag, SMS o email.',
    linkRequest: 'Gustong i-link ng {client} ang iyong account.',
    mobileLabel: 'Numero ng mobile',
    mobileHint: 'Kasama ang country code, halimbawa {example}',
    mobileFixedHint: 'Ito ang numerong naka-link sa iyong request; hindi ito mapapalitan dito.',
    pinLabel: 'PIN',
    pinHint: '4 hanggang 6 na digit',
    cancel: 'Kanselahin',
  },
  login: {
    title: 'Mag-log in',
    heading: 'Mag-log in para magpatuloy',
    submit: 'Magpatuloy',
    newHere: 'Bago sa Connect?',
    toRegister: 'Gumawa ng account',
    forgotPin: 'Nakalimutan ang PIN?',
    pinChanged: 'Napalitan na ang iyong PIN, at na-sign out ka sa lahat ng device. Mag-log in gamit ang bago mong PIN.',
  },
  register: {
    title: 'Gumawa ng account',
    heading: 'Gawin ang iyong account',
    lead: 'Pumili ng PIN para magawa ang iyong Connect account. Padadalhan ka namin ng code sa SMS para makumpirma ang iyong numero.',
    pinLabel: 'Pumili ng PIN',
    pinHint: '4 hanggang 6 na digit. Iwasan ang madaling hulaan gaya ng 1111, 1234 o ang iyong kaarawan.',
    confirmLabel: 'Ilagay muli ang PIN',
    confirmHint: 'Ang parehong 4 hanggang 6 na digit, para sigurado.',
    submit: 'Gumawa ng account',
    haveAccount: 'May account ka na?',
    toLogin: 'Mag-log in',
  },
  otp: {
    title: 'Ilagay ang code',
    heading: 'Ilagay ang code na ipinadala namin sa SMS',
    lead: 'Nagpadala kami ng 6-digit na code sa {mobile} sa pamamagitan ng SMS.',
    label: 'Code mula sa SMS',
    hint: '6 na digit, may bisa sa loob ng 5 minuto',
    submit: 'I-verify',
    noMoreCodes: 'Wala nang bagong code na maipapadala para sa pag-sign in na ito.',
    resendIn: (seconds) => `Hindi natanggap? Puwede kang humingi ng bagong code pagkalipas ng ${seconds} segundo.`,
    resendNow: 'Hindi natanggap? Humingi ng bagong code.',
    resend: 'Magpadala ng bagong code',
    codeSent: 'Nagpadala kami ng bagong code sa {mobile}.',
  },
  reset: {
    title: 'I-reset ang PIN',
    heading: 'I-reset ang iyong PIN',
    lead: 'Ilagay ang iyong numero ng mobile. Kung may Connect account ito, padadalhan namin ito ng code sa SMS para makapili ka ng bagong PIN.',
    submit: 'Ipadala ang code',
    backToLogin: 'Bumalik sa pag-log in',
  },
  resetOtp: {
    title: 'Ilagay ang code',
    heading: 'Ilagay ang code para ma-reset ang iyong PIN',
    lead: 'Kung may Connect account ang {mobile}, nagpadala kami rito ng 6-digit na code sa pamamagitan ng SMS.',
    codeSent: 'Kung may Connect account ang {mobile}, nagpadala kami rito ng bagong code.',
  },
  newPin: {
    title: 'Bagong PIN',
    heading: 'Pumili ng bagong PIN',
    lead: 'Para sa {mobile}. Kapag napalitan na ito, masa-sign out ka sa lahat ng device, at hihilingin ng mga app na naka-link sa iyong account na mag-log in kang muli.',
    pinLabel: 'Bagong PIN',
    pinHint: '4 hanggang 6 na digit. Iwasan ang madaling hulaan gaya ng 1111, 1234 o ang iyong kaarawan.',
    confirmLabel: 'Ilagay muli ang bagong PIN',
    confirmHint: 'Ang parehong 4 hanggang 6 na digit, para sigurado.',
    submit: 'Palitan ang PIN',
  },
  consent: {
    title: 'Payagan ang {client}',
    heading: 'Payagan ang {client}?',
    signedInAs: 'Naka-sign in ka bilang {mobile}. Para sa app na ito lang ang iyong sagot.',
    allow: 'Payagan',
  },
  errorPage: {
    closeHint: 'Puwede mo nang isara ang page na ito at bumalik sa app na pinanggalingan mo.',
    details: 'Mga detalye:',
  },
  problems: {
    mobile_invalid: 'Ilagay ang iyong numero ng mobile sa international format, halimbawa +63 917 123 4567.',
    mobile_taken: 'May account na ang numerong ito. Mag-log in na lang.',
    pin_format: 'Ang iyong PIN ay 4 hanggang 6 na digit.',
    pin_format_new: 'Pumili ng PIN na 4 hanggang 6 na digit.',
    pin_mismatch: 'Hindi magkapareho ang dalawang PIN.',
    pin_weak_repeated: 'Masyadong madaling hulaan ang PIN na iyan: inuulit nito ang parehong mga digit, gaya ng 1111 o 1212. Pumili ng ibang PIN.',
    pin_weak_sequence: 'Masyadong madaling hulaan ang PIN na iyan: magkakasunod ang mga digit nito, gaya ng 1234 o 9876. Pumili ng ibang PIN.',
    pin_weak_common: 'Isa ang PIN na iyan sa mga pinakakaraniwang PIN at madali itong hulaan. Pumili ng ibang PIN.',
    pin_wrong: 'Mali ang PIN na iyan.',
    credentials_wrong: 'Mali ang numero ng mobile o ang PIN.',
    pin_locked: (minutes) =>
      `Masyadong maraming maling PIN. Para sa iyong seguridad, naka-lock ang pag-log in gamit ang PIN para sa numerong ito. Subukang muli ${afterMinutes(minutes)}.`,
    account_locked: 'Naka-lock ang account na ito. Makipag-ugnayan sa customer support ng {client}.',
    too_many_attempts: (minutes) => `Masyadong maraming pagsubok mula sa iyong network. Subukang muli ${afterMinutes(minutes)}.`,
    otp_format: 'Ilagay ang 6-digit na code mula sa SMS.',
    otp_wrong: (triesLeft) => `Mali ang code na iyan. ${triesLeft} subok na lang ang natitira.`,
    otp_exhausted: 'Masyadong maraming maling code. Humingi ng bagong code.',
    otp_expired: 'Nag-expire na ang code na ito. Humingi ng bagong code.',
    otp_too_many: (minutes) => `Masyadong maraming maling code ang nailagay para sa numerong ito. Subukang muli ${afterMinutes(minutes)}.`,
    sms_rate_limited: (minutes) => `Masyadong maraming code na ang naipadala. Subukang muli ${afterMinutes(minutes)}.`,
    sms_too_soon: (seconds) => `Puwede kang humingi ng bagong code pagkalipas ng ${seconds} segundo.`,
    sms_no_more_resends: 'Wala nang code na maipapadala para sa pag-sign in na ito. Bumalik sa app at magsimulang muli.',
    sms_unavailable: 'Hindi namin naipadala ang code. Subukang muli: humingi ng bagong code.',
    sms_budget_spent: 'Hindi kami makapagpadala ng code sa ngayon. Subukang muli mamaya.',
    mobile_country: 'Hindi kami makapagpadala ng code sa numerong ito. Gumamit ng numero ng mobile mula sa bansang sinusuportahan ng serbisyong ito.',
    reset_expired: 'Naubos na ang oras para pumili ng bagong PIN. Humingi ng bagong code.',
  },
  deadEnds: {
    expired: {
      title: 'Nag-expire na ang pag-sign in na ito',
      message: 'Nag-expire na ang page na ito o binuksan ito sa ibang browser. Bumalik sa app at magsimulang muli.',
    },
    finished: { title: 'Tapos na ang pag-sign in na ito', message: 'Natapos na ang pag-sign in na ito. Bumalik sa app para magpatuloy.' },
    client_unavailable: {
      title: 'Hindi maituloy ang pag-sign in',
      message: 'Hindi makapag-sign in ng mga customer ang app na nagpadala sa iyo rito sa ngayon.',
    },
    account_unavailable: {
      title: 'Hindi maituloy ang pag-sign in',
      message: 'Hindi makapag-sign in ang account na ito sa ngayon. Makipag-ugnayan sa customer support ng {client}.',
    },
  },
  linkErrors: {
    title: 'Hindi magagamit ang link na ito',
    client_id_repeated: 'Inulit ang client_id.',
    client_id_missing: 'Hindi binanggit ng request ang application (walang client_id).',
    client_unknown: 'Hindi kilala ang application na nagpadala sa iyo rito.',
    client_disabled: 'Hindi makapag-sign in ng mga customer ang {client} sa ngayon.',
    client_not_signable: 'Hindi application na pinag-sign-in-an ng mga customer ang {client}.',
    redirect_uri_repeated: 'Inulit ang redirect_uri.',
    redirect_uri_missing: 'Hindi sinabi ng request kung saan ka ibabalik (walang redirect_uri).',
    redirect_uri_mismatch: 'Hindi ito ang return address na nakarehistro para sa {client}.',
  },
  failures: {
    formExpired: {
      title: 'Nag-expire na ang form na ito',
      message: 'Masyadong luma na ang form o hindi ito galing sa page na ito. Bumalik sa app at magsimulang muli.',
    },
    unavailable: {
      title: 'Pakisubukang muli sa ilang sandali',
      message: 'Hindi namin makumpleto ang iyong request sa ngayon. Pakisubukang muli maya-maya.',
    },
    serverError: { title: 'May nangyaring mali', message: 'Hindi namin nakumpleto ang iyong request. Pakisubukang muli sa ilang sandali.' },
    badRequest: { title: 'Hindi magagamit ang request na ito', message: 'Hindi mabasa ng Connect ang request na ito. Bumalik sa app at magsimulang muli.' },
    tooManyStarts: {
      title: 'Masyadong maraming pag-sign in',
      message: (minutes) => `Masyadong maraming pag-sign in ang sinimulan mula sa iyong network. Pakisubukang muli ${afterMinutes(minutes)}.`,
    },
  },
};
